// /audit: the lifecycle log, filtered.
import type { DbWriterCalls } from '../../db/writer-handle.js';
import { CofferError } from '../../protocol/errors.js';
import type { Route } from '../http-api.js';

export function auditRoutes(writer: DbWriterCalls): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/audit',
      handler: async (request) => {
        const limitText = request.query.get('limit');
        const limit = limitText === null ? 100 : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CofferError('CONFIG_INVALID', 'limit: must be an integer from 1 to 10000', { errors: [{ field: 'limit', message: 'must be an integer from 1 to 10000' }] });
        const filter: Parameters<DbWriterCalls['listAudit']>[0] = { limit };
        for (const [param, field] of [['server', 'server'], ['event_type', 'event_type'], ['since', 'since']] as const) {
          const value = request.query.get(param);
          if (value !== null) filter[field] = value;
        }
        return { status: 200, body: { entries: await writer.listAudit(filter) } };
      },
    },
  ];
}
