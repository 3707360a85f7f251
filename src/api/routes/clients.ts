// /clients: the named credentials of MCP clients. A token is made here, shown
// once in the POST's answer, and only its SHA-256 goes to the database.
import { newToken } from '../../daemon/daemon-file.js';
import type { DbWriterCalls } from '../../db/writer-handle.js';
import { hashToken } from '../../http/mcp-auth.js';
import type { ClientCredential } from '../../protocol/db.js';
import { CofferError } from '../../protocol/errors.js';
import { unwrap } from '../../registry/registry.js';
import { toolsetField } from '../../toolsets/spec.js';
import type { Route } from '../http-api.js';

type ClientWriter = Pick<DbWriterCalls, 'listClients' | 'addClient' | 'revokeClient'>;

/** Told of each change once it is committed, so /mcp accepts or refuses the token at once. */
export interface ClientChanges {
  added(client: ClientCredential): void;
  revoked(name: string): void;
}

const CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function nameOf(body: unknown): string {
  const name = typeof body === 'object' && body !== null ? (body as { name?: unknown }).name : undefined;
  if (typeof name === 'string' && CLIENT_NAME.test(name)) return name;
  const message = 'must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit';
  throw new CofferError('CONFIG_INVALID', `name: ${message}`, { errors: [{ field: 'name', message }] });
}

/** What is shown of a client: never its hash. */
const publicView = ({ name, created_at, toolset }: ClientCredential) => ({ name, created_at, toolset });

export function clientRoutes(writer: ClientWriter, changes: ClientChanges): Route[] {
  return [
    { method: 'GET', pattern: '/clients', handler: async () => ({ status: 200, body: { clients: (await writer.listClients()).map(publicView) } }) },
    {
      method: 'POST',
      pattern: '/clients',
      handler: async (request) => {
        const token = newToken();
        const client = unwrap(await writer.addClient(nameOf(request.body), hashToken(token), request.actor, toolsetField(request.body, false)));
        changes.added(client);
        return { status: 201, body: { ...publicView(client), token } };
      },
    },
    {
      method: 'DELETE',
      pattern: '/clients/:name',
      handler: async (request, params) => {
        unwrap(await writer.revokeClient(params.name!, request.actor));
        changes.revoked(params.name!);
        return { status: 204 };
      },
    },
  ];
}
