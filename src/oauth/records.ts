// Upstreams' OAuth state kept by the DB writer (sealed there). A failed save is
// logged without the record: it holds secrets.
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { Logger } from '../log.js';
import { signsInWithOAuth } from '../protocol/oauth.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { OAuthRecords } from '../upstreams/pool.js';
import type { SignInServers } from './sign-ins.js';

export function oauthRecords(writer: Pick<DbWriterCalls, 'getOAuth' | 'saveOAuth'>, log: Logger): OAuthRecords {
  return {
    load: (server) => writer.getOAuth(server),
    save: (server, record) => {
      writer.saveOAuth(server, record).catch((error: Error) => log.warn('the OAuth state of an upstream was not stored', { server, error: error.message }));
    },
  };
}

/** When the tokens held for the server's current URL were obtained (null: none held, or it does not sign in with OAuth). */
async function tokensHeldSince(writer: Pick<DbWriterCalls, 'getOAuth'>, config: ServerConfig | undefined): Promise<string | null> {
  if (!config || !signsInWithOAuth(config.transport)) return null;
  const record = await writer.getOAuth(config.name);
  return record?.resource === config.transport.url && record.tokens ? new Date(record.obtainedAt ?? 0).toISOString() : null;
}

/** The registered servers as the sign-ins see them: their URL now, and the tokens stored for it. */
export function signInServers(writer: Pick<DbWriterCalls, 'getOAuth'>, config: (server: string) => ServerConfig | undefined): SignInServers {
  return {
    urlOf: (server) => {
      const transport = config(server)?.transport;
      return transport && transport.type !== 'stdio' ? transport.url : null;
    },
    storedAt: (server) => tokensHeldSince(writer, config(server)),
  };
}
