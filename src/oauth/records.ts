// Upstreams' OAuth state kept by the DB writer (sealed there). A failed save is
// logged without the record: it holds secrets.
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { Logger } from '../log.js';
import { CofferError } from '../protocol/errors.js';
import { signsInWithOAuth, type OAuthRecord } from '../protocol/oauth.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { OAuthRecords } from '../upstreams/pool.js';
import type { SignInServers } from './sign-ins.js';

/** The server's stored record (null: none); one the writer refuses to read throws its code and message. */
export async function storedRecord(writer: Pick<DbWriterCalls, 'getOAuth'>, server: string): Promise<OAuthRecord | null> {
  const read = await writer.getOAuth(server);
  if (!read.ok) throw new CofferError(read.error.code, read.error.message);
  return read.value;
}

export function oauthRecords(writer: Pick<DbWriterCalls, 'getOAuth' | 'saveOAuth'>, log: Logger): OAuthRecords {
  return {
    // An actor starts without a record it cannot have: it then asks for a sign-in, which replaces it.
    load: (server) =>
      storedRecord(writer, server).catch((error: Error) => {
        log.warn('the stored OAuth state of an upstream was not read', { server, error: error.message });
        return null;
      }),
    save: (server, record) => {
      writer.saveOAuth(server, record).catch((error: Error) => log.warn('the OAuth state of an upstream was not stored', { server, error: error.message }));
    },
  };
}

/** When the tokens held for the server's current URL were obtained (null: none held, or it does not sign in with OAuth). */
async function tokensHeldSince(writer: Pick<DbWriterCalls, 'getOAuth'>, config: ServerConfig | undefined): Promise<string | null> {
  if (!config || !signsInWithOAuth(config.transport)) return null;
  const record = await storedRecord(writer, config.name);
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
