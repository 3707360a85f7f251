// oauth_credentials: one sealed OAuthRecord per upstream that signed in, bound
// (by the seal's associated data) to the server and the resource it is for, so
// a value copied to another row or URL does not open. Never audited: it is
// nothing but secrets.
import type { Database, Statement } from 'better-sqlite3';
import type { Result } from '../../src/protocol/errors.js';
import { MAX_DEPTH } from '../../src/protocol/message-limit.js';
import { textDepth } from '../../src/protocol/nesting.js';
import { signInCommand, type OAuthRecord } from '../../src/protocol/oauth.js';
import { now } from './clock.js';
import { openValue, sealValue } from './secrets.js';

const FIELD = 'oauth';

interface Statements {
  select: Statement<[string], { resource: string; sealed: string }>;
  upsert: Statement<[string, string, string, string]>;
  remove: Statement<[string]>;
}

export class OAuthStore {
  private prepared: Statements | null = null;

  constructor(
    private readonly db: Database,
    private readonly key: Buffer,
  ) {}

  private get statements(): Statements {
    return (this.prepared ??= {
      select: this.db.prepare('SELECT o.resource, o.sealed FROM oauth_credentials o JOIN mcp_servers s ON s.id = o.server_id WHERE s.name = ?'),
      upsert: this.db.prepare(
        `INSERT INTO oauth_credentials (server_id, resource, sealed, updated_at) SELECT id, ?, ?, ? FROM mcp_servers WHERE name = ?
         ON CONFLICT (server_id) DO UPDATE SET resource = excluded.resource, sealed = excluded.sealed, updated_at = excluded.updated_at`,
      ),
      remove: this.db.prepare('DELETE FROM oauth_credentials WHERE server_id = (SELECT id FROM mcp_servers WHERE name = ?)'),
    });
  }

  /**
   * The server's record, or null (none, or one that does not open: it is then as good as none).
   * One nested past MAX_DEPTH is refused: the main thread could not take it back (its
   * deserialisation fails, and the call would never be answered).
   */
  get(server: string): Result<OAuthRecord | null> {
    const row = this.statements.select.get(server);
    if (!row) return { ok: true, value: null };
    let text: string;
    try {
      text = openValue(this.key, server, FIELD, row.resource, row.sealed);
    } catch {
      return { ok: true, value: null };
    }
    if (textDepth(text, MAX_DEPTH) > MAX_DEPTH) {
      const message = `the stored OAuth state of upstream ${server} nests deeper than ${MAX_DEPTH} levels and is not read: sign in again with '${signInCommand(server)}' to replace it`;
      return { ok: false, error: { code: 'INTERNAL', message } };
    }
    // What opens is what save sealed: JSON.stringify's text.
    return { ok: true, value: JSON.parse(text) as OAuthRecord };
  }

  /** null forgets it. A server that is gone stores nothing. */
  save(server: string, record: OAuthRecord | null): void {
    if (record === null) {
      this.statements.remove.run(server);
      return;
    }
    const sealed = sealValue(this.key, server, FIELD, record.resource, JSON.stringify(record));
    this.statements.upsert.run(record.resource, sealed, now(), server);
  }
}
