// `coffer audit list`: the audit log of lifecycle changes (servers, capabilities, token, retention).
import { expectPositionals, parsePositiveInt } from '../args.js';
import { groupCommand, defineAction, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine, printTable, usageError } from '../output.js';

interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  event_type: string;
  server: string | null;
  payload: Record<string, unknown>;
}

/** Human output only: --json has the whole payload. */
const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

const DURATION_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** --since: an ISO date/time, or a duration back from now (`30m`, `2h`, `7d`); answered as ISO UTC. */
export function parseSince(raw: string, now = Date.now()): string {
  const duration = /^(\d+)([smhd])$/.exec(raw.trim());
  if (duration) return new Date(now - Number(duration[1]) * DURATION_MS[duration[2]!]!).toISOString();
  const at = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw.trim()) || Number.isNaN(at)) {
    throw usageError(`--since expects an ISO date/time (2025-01-31 or 2025-01-31T12:00:00Z) or a duration (30m, 2h, 7d), got '${raw}'`);
  }
  return new Date(at).toISOString();
}

const list = defineAction(
  'list',
  `list [--server NAME] [--event TYPE] [--since ISO|DURATION] [--limit N] [--json]
      Audit entries: time, actor (cli, api, ui, system), event type
      (server_added, server_updated, capability_disabled, token_rotated, ...),
      server and what changed (shortened; --json has it whole). --since takes
      an ISO time or 30m / 2h / 7d.`,
  { server: { type: 'string' }, event: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const query = new URLSearchParams();
    if (values.server !== undefined) query.set('server', values.server);
    if (values.event !== undefined) query.set('event_type', values.event);
    if (values.since !== undefined) query.set('since', parseSince(values.since));
    const limit = parsePositiveInt(values.limit, '--limit');
    if (limit !== undefined) query.set('limit', String(limit));
    const search = query.toString();
    const { entries } = await api().get<{ entries: AuditEntry[] }>(`/audit${search ? `?${search}` : ''}`);
    if (values.json) printJson({ entries });
    else if (entries.length === 0) printLine('no audit entries match');
    else {
      printTable([
        ['AT', 'ACTOR', 'EVENT', 'SERVER', 'DETAILS'],
        ...entries.map((entry) => [entry.at, entry.actor, entry.event_type, entry.server ?? '-', clip(JSON.stringify(entry.payload ?? {}), 120)]),
      ]);
    }
    return EXIT.OK;
  },
);

export const auditCommand: Command = groupCommand('audit', 'list the audit log', [list]);
