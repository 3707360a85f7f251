// `coffer mcp invocations [NAME]`: the invocation log (tools/call, resources/read,
// prompts/get through the gateway; never arguments or results), newest first.
import type { InvocationRow } from '../../protocol/db.js';
import type { InvocationStatus } from '../../protocol/events.js';
import { parsePositiveInt } from '../args.js';
import { defineAction } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine, printTable, usageError } from '../output.js';
import { parseSince } from './audit.js';

export const INVOCATION_STATUSES: readonly InvocationStatus[] = ['ok', 'error', 'timeout', 'denied'];

/** The query of GET /invocations from the command line (usage errors before any request). */
export function invocationQuery(server: string | undefined, values: { status?: string; since?: string; limit?: string }): URLSearchParams {
  const query = new URLSearchParams();
  if (server !== undefined) query.set('server', server);
  if (values.status !== undefined) {
    if (!(INVOCATION_STATUSES as readonly string[]).includes(values.status)) {
      throw usageError(`--status expects one of ${INVOCATION_STATUSES.join(', ')}, got '${values.status}'`);
    }
    query.set('status', values.status);
  }
  if (values.since !== undefined) query.set('since', parseSince(values.since));
  const limit = parsePositiveInt(values.limit, '--limit');
  if (limit !== undefined) query.set('limit', String(limit));
  return query;
}

const formatStatus = (row: InvocationRow): string => (row.status !== 'ok' && row.error_code !== null ? `${row.status} (${row.error_code})` : row.status);

export const invocationsAction = defineAction(
  'invocations',
  `invocations [NAME] [--status ok|error|timeout|denied] [--since ISO|DURATION] [--limit N] [--json]
      Calls through the gateway (tools/call, resources/read, prompts/get),
      newest first: time, server, kind, key, status (with the JSON-RPC error
      code), duration. Never their arguments or results. NAME: one server's
      only. --since takes an ISO time or 30m / 2h / 7d; --limit defaults to 100
      (the daemon's default).`,
  { status: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    if (positionals.length > 1) throw usageError(`unexpected argument '${positionals[1]}'`);
    const search = invocationQuery(positionals[0], values).toString();
    const { invocations } = await api().get<{ invocations: InvocationRow[] }>(`/invocations${search ? `?${search}` : ''}`);
    if (values.json) printJson({ invocations });
    else if (invocations.length === 0) printLine('no invocations match');
    else {
      printTable([
        ['AT', 'SERVER', 'KIND', 'KEY', 'STATUS', 'DURATION'],
        ...invocations.map((row) => [row.at, row.server, row.kind, row.key, formatStatus(row), `${row.duration_ms} ms`]),
      ]);
    }
    return EXIT.OK;
  },
);
