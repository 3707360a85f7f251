// Upstreams' OAuth state kept by the DB writer (sealed there). A failed save is
// logged without the record: it holds secrets.
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { Logger } from '../log.js';
import type { OAuthRecords } from '../upstreams/pool.js';

export function oauthRecords(writer: Pick<DbWriterCalls, 'getOAuth' | 'saveOAuth'>, log: Logger): OAuthRecords {
  return {
    load: (server) => writer.getOAuth(server),
    save: (server, record) => {
      writer.saveOAuth(server, record).catch((error: Error) => log.warn('the OAuth state of an upstream was not stored', { server, error: error.message }));
    },
  };
}
