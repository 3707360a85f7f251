// /invocations: the invocation log (never arguments or results), newest first, filtered.
import type { DbWriterCalls } from '../../db/writer-handle.js';
import { CofferError } from '../../protocol/errors.js';
import type { InvocationStatus } from '../../protocol/events.js';
import type { Route } from '../http-api.js';

const STATUSES: readonly InvocationStatus[] = ['ok', 'error', 'timeout', 'denied'];
const MAX_LIMIT = 10_000;

type Filter = Parameters<DbWriterCalls['listInvocations']>[0];

/** Validates the query; every problem is named at once. */
export function parseInvocationQuery(query: URLSearchParams): Filter {
  const errors: { field: string; message: string }[] = [];
  const filter: Filter = {};

  const limitText = query.get('limit');
  const limit = limitText === null ? 100 : Number(limitText);
  if (limitText?.trim() === '' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    errors.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  } else filter.limit = limit;

  const status = query.get('status');
  if (status !== null) {
    if ((STATUSES as readonly string[]).includes(status)) filter.status = status as InvocationStatus;
    else errors.push({ field: 'status', message: `must be one of ${STATUSES.join(', ')}` });
  }

  const since = query.get('since');
  if (since !== null) {
    const time = Date.parse(since);
    if (Number.isNaN(time)) errors.push({ field: 'since', message: 'must be a date or time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z' });
    else filter.since = new Date(time).toISOString();
  }

  const server = query.get('server');
  if (server !== null) {
    if (server === '') errors.push({ field: 'server', message: 'must not be empty' });
    else filter.server = server;
  }

  if (errors.length > 0) {
    throw new CofferError('CONFIG_INVALID', errors.map((error) => `${error.field}: ${error.message}`).join('; '), { errors });
  }
  return filter;
}

/**
 * `flushPending` hands the calls still buffered on the main thread to the writer first: a call made a moment ago
 * is in the answer (read your own calls), not only after the next batch.
 */
export function invocationRoutes(writer: Pick<DbWriterCalls, 'listInvocations'>, flushPending: () => Promise<void> = async () => {}): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/invocations',
      handler: async (request) => {
        const filter = parseInvocationQuery(request.query);
        await flushPending();
        return { status: 200, body: { invocations: await writer.listInvocations(filter) } };
      },
    },
  ];
}
