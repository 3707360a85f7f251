// /retention: how long the audit and invocation logs are kept, and a prune on demand.
import type { DbWriterCalls } from '../../db/writer-handle.js';
import type { RetentionPolicy } from '../../protocol/db.js';
import { CofferError, type Result } from '../../protocol/errors.js';
import type { Route } from '../http-api.js';

type RetentionWriter = Pick<DbWriterCalls, 'listRetention' | 'setRetention' | 'prune'>;

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new CofferError(result.error.code, result.error.message, result.error.details);
  return result.value;
}

async function policyOf(writer: RetentionWriter, table: string): Promise<RetentionPolicy> {
  const policies = await writer.listRetention();
  const policy = policies.find((candidate) => candidate.table === table);
  if (!policy) {
    const tables = policies.map((candidate) => candidate.table);
    throw new CofferError('RESOURCE_NOT_FOUND', `no retention policy for "${table}": the tables are ${tables.join(', ')}`, { table, tables });
  }
  return policy;
}

/** The PATCH body: exactly {days: number | null}; the writer checks the range. */
function daysOf(body: unknown): number | null {
  const invalid = (message: string): never => {
    throw new CofferError('CONFIG_INVALID', `days: ${message}`, { errors: [{ field: 'days', message }] });
  };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('send a JSON object {"days": N} (N days) or {"days": null} (forever)');
  if (!('days' in body)) return invalid('is required: a number of days, or null to keep forever');
  const unknown = Object.keys(body).filter((key) => key !== 'days');
  if (unknown.length > 0) {
    throw new CofferError('CONFIG_INVALID', `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: only "days" can be set`, {
      errors: unknown.map((field) => ({ field, message: 'unknown field' })),
    });
  }
  const { days } = body as { days: unknown };
  if (days !== null && typeof days !== 'number') return invalid('must be a number of days, or null to keep forever');
  return days as number | null;
}

export function retentionRoutes(writer: RetentionWriter): Route[] {
  return [
    { method: 'GET', pattern: '/retention', handler: async () => ({ status: 200, body: { policies: await writer.listRetention() } }) },
    { method: 'GET', pattern: '/retention/:table', handler: async (_request, params) => ({ status: 200, body: await policyOf(writer, params.table!) }) },
    {
      method: 'PATCH',
      pattern: '/retention/:table',
      handler: async (request, params) => {
        // 404 for an unknown table before any complaint about the body.
        await policyOf(writer, params.table!);
        return { status: 200, body: unwrap(await writer.setRetention(params.table!, daysOf(request.body), request.actor)) };
      },
    },
    { method: 'POST', pattern: '/retention/prune', handler: async () => ({ status: 200, body: { pruned: await writer.prune() } }) },
  ];
}
