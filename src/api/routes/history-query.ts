// The query fields the two history routes share (/audit, /invocations):
// checked alike, each problem added to the list so that a route names every
// one at once. `since` is turned into the UTC form the rows are stored in, so
// a time written with an offset filters by its instant, not by its text.
import { CofferError } from '../../protocol/errors.js';

export interface QueryProblem {
  field: string;
  message: string;
}

const MAX_LIMIT = 10_000;

export function limitOf(query: URLSearchParams, problems: QueryProblem[]): number | undefined {
  const text = query.get('limit');
  const limit = text === null ? 100 : Number(text);
  if (text?.trim() !== '' && Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIMIT) return limit;
  problems.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  return undefined;
}

export function sinceOf(query: URLSearchParams, problems: QueryProblem[]): string | undefined {
  const since = query.get('since');
  if (since === null) return undefined;
  const time = Date.parse(since);
  if (!Number.isNaN(time)) return new Date(time).toISOString();
  problems.push({ field: 'since', message: 'must be a date or time, e.g. 2025-01-31 or 2025-01-31T12:00:00Z' });
  return undefined;
}

export function serverOf(query: URLSearchParams, problems: QueryProblem[]): string | undefined {
  const server = query.get('server');
  if (server !== '') return server ?? undefined;
  problems.push({ field: 'server', message: 'must not be empty' });
  return undefined;
}

/** CONFIG_INVALID naming every problem, when there is one. */
export function refuseProblems(problems: QueryProblem[]): void {
  if (problems.length > 0) throw new CofferError('CONFIG_INVALID', problems.map((problem) => `${problem.field}: ${problem.message}`).join('; '), { errors: problems });
}
