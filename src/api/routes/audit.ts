// /audit: the lifecycle log, filtered.
import type { DbWriterCalls } from '../../db/writer-handle.js';
import type { Route } from '../http-api.js';
import { limitOf, refuseProblems, serverOf, sinceOf, type QueryProblem } from './history-query.js';

type Filter = Parameters<DbWriterCalls['listAudit']>[0];

/** Validates the query; every problem is named at once. */
function parseAuditQuery(query: URLSearchParams): Filter {
  const problems: QueryProblem[] = [];
  const filter: Filter = {};
  const limit = limitOf(query, problems);
  if (limit !== undefined) filter.limit = limit;
  const server = serverOf(query, problems);
  if (server !== undefined) filter.server = server;
  const eventType = query.get('event_type');
  if (eventType !== null) filter.event_type = eventType;
  const since = sinceOf(query, problems);
  if (since !== undefined) filter.since = since;
  refuseProblems(problems);
  return filter;
}

export function auditRoutes(writer: DbWriterCalls): Route[] {
  return [{ method: 'GET', pattern: '/audit', handler: async (request) => ({ status: 200, body: { entries: await writer.listAudit(parseAuditQuery(request.query)) } }) }];
}
