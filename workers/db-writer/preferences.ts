// mcp_capability_preferences (R1): per capability key, only the user's switch and when it was seen.
import type { Database, Statement } from 'better-sqlite3';
import type { CapabilityType } from '../../src/protocol/capabilities.js';
import type { AuditActor, OwnWords, PreferenceChange, PreferenceRow } from '../../src/protocol/db.js';
import type { Result } from '../../src/protocol/errors.js';
import type { AuditLog } from './audit.js';
import { now } from './clock.js';

/** A key as bound and read: UTF-8 text, or (when it holds a lone surrogate) its UTF-16 code units as a BLOB. */
type StoredKey = string | Buffer;

interface StoredPreference extends Omit<PreferenceRow, 'enabled' | 'capability_key'> {
  enabled: 0 | 1;
  capability_key: StoredKey;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * SQLite text is UTF-8, which has no lone surrogate: an upstream's name with one would come
 * back as U+FFFD, another key than the live one, so its switch would govern nothing and the
 * next reconcile would insert it again (UNIQUE). Such a key is kept as a BLOB of its exact
 * code units; a BLOB never equals a text, so it cannot collide with a well-formed key.
 */
function storedKey(key: string): StoredKey {
  return LONE_SURROGATE.test(key) ? Buffer.from(key, 'utf16le') : key;
}

function keyOf(stored: StoredKey): string {
  return typeof stored === 'string' ? stored : stored.toString('utf16le');
}

const COLUMNS = `s.name AS server, p.capability_type, p.capability_key, p.enabled, p.first_seen_at, p.last_seen_at,
  p.own_name, p.own_description
  FROM mcp_capability_preferences p JOIN mcp_servers s ON s.id = p.resource_id`;

function toRow(stored: StoredPreference): PreferenceRow {
  return { ...stored, capability_key: keyOf(stored.capability_key), enabled: stored.enabled === 1 };
}

interface Statements {
  selectAll: Statement<[], StoredPreference>;
  selectServer: Statement<[number], StoredPreference>;
  selectType: Statement<[number, CapabilityType], StoredPreference>;
  selectOne: Statement<[number, CapabilityType, StoredKey], StoredPreference>;
  insert: Statement<[number, CapabilityType, StoredKey, number, string, string]>;
  touch: Statement<[string, number, CapabilityType, StoredKey]>;
  setEnabled: Statement<[number, number, CapabilityType, StoredKey]>;
  setWords: Statement<[string | null, string | null, number, CapabilityType, StoredKey]>;
  /** Another key of the server and kind whose own or upstream name is this name. */
  nameHolder: Statement<[number, CapabilityType, StoredKey, StoredKey, string], { capability_key: StoredKey }>;
}

export class PreferenceStore {
  private prepared: Statements | null = null;

  constructor(
    private readonly db: Database,
    private readonly audit: AuditLog,
  ) {}

  /** Prepared on first use: a writer may open a database older than these columns (tests of migrations). */
  private get statements(): Statements {
    const db = this.db;
    const order = 'ORDER BY s.name, p.capability_type, p.capability_key';
    return (this.prepared ??= {
      selectAll: db.prepare(`SELECT ${COLUMNS} ${order}`),
      selectServer: db.prepare(`SELECT ${COLUMNS} WHERE p.resource_id = ? ${order}`),
      selectType: db.prepare(`SELECT ${COLUMNS} WHERE p.resource_id = ? AND p.capability_type = ? ${order}`),
      selectOne: db.prepare(`SELECT ${COLUMNS} WHERE p.resource_id = ? AND p.capability_type = ? AND p.capability_key = ?`),
      insert: db.prepare(
        `INSERT INTO mcp_capability_preferences (resource_id, capability_type, capability_key, enabled, first_seen_at, last_seen_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      touch: db.prepare(
        'UPDATE mcp_capability_preferences SET last_seen_at = ? WHERE resource_id = ? AND capability_type = ? AND capability_key = ?',
      ),
      setEnabled: db.prepare(
        'UPDATE mcp_capability_preferences SET enabled = ? WHERE resource_id = ? AND capability_type = ? AND capability_key = ?',
      ),
      setWords: db.prepare(
        'UPDATE mcp_capability_preferences SET own_name = ?, own_description = ? WHERE resource_id = ? AND capability_type = ? AND capability_key = ?',
      ),
      nameHolder: db.prepare(
        `SELECT capability_key FROM mcp_capability_preferences
         WHERE resource_id = ? AND capability_type = ? AND capability_key <> ? AND (capability_key = ? OR own_name = ?) LIMIT 1`,
      ),
    });
  }

  list(serverId?: number): PreferenceRow[] {
    const rows = serverId === undefined ? this.statements.selectAll.all() : this.statements.selectServer.all(serverId);
    return rows.map(toRow);
  }

  /** R4: insert what is new (audited), bump what is seen, keep what vanished. */
  reconcile(serverId: number, server: string, type: CapabilityType, keys: string[], autoEnable: boolean): PreferenceRow[] {
    return this.db.transaction(() => {
      const known = new Set(this.statements.selectType.all(serverId, type).map((row) => keyOf(row.capability_key)));
      const at = now();
      for (const key of new Set(keys)) {
        if (known.has(key)) {
          this.statements.touch.run(at, serverId, type, storedKey(key));
        } else {
          this.statements.insert.run(serverId, type, storedKey(key), autoEnable ? 1 : 0, at, at);
          this.audit.record('system', 'capability_first_seen', server, { type, key, enabled: autoEnable });
        }
      }
      return this.statements.selectType.all(serverId, type).map(toRow);
    })();
  }

  /** All or nothing: every key is checked before the first change. Answers the rows asked about. */
  set(serverId: number, server: string, changes: PreferenceChange[], actor: AuditActor): Result<PreferenceRow[]> {
    return this.db.transaction((): Result<PreferenceRow[]> => {
      const current = new Map<string, StoredPreference>();
      for (const change of changes) {
        const id = `${change.capability_type}\0${change.capability_key}`;
        const row = current.get(id) ?? this.statements.selectOne.get(serverId, change.capability_type, storedKey(change.capability_key));
        if (!row) {
          return {
            ok: false,
            error: {
              code: 'RESOURCE_NOT_FOUND',
              message: `server "${server}" has no known ${change.capability_type} "${change.capability_key}"`,
              details: { server, capability_type: change.capability_type, capability_key: change.capability_key },
            },
          };
        }
        current.set(id, row);
      }
      for (const change of changes) {
        const id = `${change.capability_type}\0${change.capability_key}`;
        const row = current.get(id) as StoredPreference;
        const enabled = change.enabled ? 1 : 0;
        if (row.enabled === enabled) continue;
        this.statements.setEnabled.run(enabled, serverId, change.capability_type, storedKey(change.capability_key));
        this.audit.record(actor, change.enabled ? 'capability_enabled' : 'capability_disabled', server, {
          type: change.capability_type,
          key: change.capability_key,
        });
        current.set(id, { ...row, enabled });
      }
      return { ok: true, value: [...current.values()].map(toRow) };
    })();
  }

  /** A name another key holds (its upstream name, live or not, or its own) is refused: every exposed name routes to one tool. */
  setOwnWords(serverId: number, server: string, type: CapabilityType, key: string, words: OwnWords, actor: AuditActor): Result<PreferenceRow> {
    return this.db.transaction((): Result<PreferenceRow> => {
      const row = this.statements.selectOne.get(serverId, type, storedKey(key));
      if (!row) {
        return {
          ok: false,
          error: { code: 'RESOURCE_NOT_FOUND', message: `server "${server}" has no known ${type} "${key}"`, details: { server, capability_type: type, capability_key: key } },
        };
      }
      // The upstream's own name needs no override.
      const name = words.name === undefined ? row.own_name : words.name === key ? null : words.name;
      const description = words.description === undefined ? row.own_description : words.description;
      if (name !== null) {
        const holder = this.statements.nameHolder.get(serverId, type, storedKey(key), storedKey(name), name);
        if (holder) {
          const takenBy = keyOf(holder.capability_key);
          return {
            ok: false,
            error: {
              code: 'RESOURCE_ALREADY_EXISTS',
              message: `server "${server}" already has a ${type} named "${name}" (${takenBy}): choose another name`,
              details: { server, capability_type: type, capability_key: key, name, taken_by: takenBy },
            },
          };
        }
      }
      if (name === row.own_name && description === row.own_description) return { ok: true, value: toRow(row) };
      this.statements.setWords.run(name, description, serverId, type, storedKey(key));
      this.audit.record(actor, 'capability_words_set', server, { type, key, name, description });
      return { ok: true, value: toRow({ ...row, own_name: name, own_description: description }) };
    })();
  }
}
