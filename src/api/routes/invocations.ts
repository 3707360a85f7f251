// /invocations: the invocation log (never arguments or results), newest first, filtered.
import type { DbWriterCalls } from '../../db/writer-handle.js';
import type { InvocationStatus } from '../../protocol/events.js';
import type { Route } from '../http-api.js';
import { limitOf, refuseProblems, serverOf, sinceOf, type QueryProblem } from './history-query.js';

const STATUSES: readonly InvocationStatus[] = ['ok', 'error', 'timeout', 'denied'];

type Filter = Parameters<DbWriterCalls['listInvocations']>[0];

/** Validates the query; every problem is named at once. */
export function parseInvocationQuery(query: URLSearchParams): Filter {
  const problems: QueryProblem[] = [];
  const filter: Filter = {};
  const limit = limitOf(query, problems);
  if (limit !== undefined) filter.limit = limit;

  const status = query.get('status');
  if (status !== null) {
    if ((STATUSES as readonly string[]).includes(status)) filter.status = status as InvocationStatus;
    else problems.push({ field: 'status', message: `must be one of ${STATUSES.join(', ')}` });
  }

  const since = sinceOf(query, problems);
  if (since !== undefined) filter.since = since;
  const server = serverOf(query, problems);
  if (server !== undefined) filter.server = server;
  refuseProblems(problems);
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
