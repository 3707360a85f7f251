// Messages between the main thread and the DB writer worker (the only SQLite writer).
import type { CapabilityType } from './capabilities.js';
import type { Result } from './errors.js';
import type { InvocationRecord, InvocationStatus } from './events.js';
import type { OAuthRecord } from './oauth.js';
import type { ServerConfig } from './server-config.js';
import type { ToolsetRecord, ToolsetSpec } from './toolsets.js';

/** Who caused an audited change. */
export type AuditActor = 'cli' | 'api' | 'ui' | 'system';

export interface ServerRecord {
  config: ServerConfig;
  created_at: string;
  updated_at: string;
}

export interface PreferenceRow {
  server: string;
  capability_type: CapabilityType;
  capability_key: string;
  enabled: boolean;
  first_seen_at: string;
  last_seen_at: string;
  /** The user's own name for a tool or prompt (the part after the namespace); null: the upstream's. */
  own_name: string | null;
  /** The user's own description; null: the upstream's. */
  own_description: string | null;
}

/** The user's words for one tool or prompt: a field absent stays as it is, null goes back to the upstream's. */
export interface OwnWords {
  name?: string | null;
  description?: string | null;
}

export interface PreferenceChange {
  capability_type: CapabilityType;
  capability_key: string;
  enabled: boolean;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: AuditActor;
  event_type: string;
  server: string | null;
  payload: Record<string, unknown>;
}

export interface DbInit {
  /** Path of coffer.db. */
  dbPath: string;
  /** Folder of numbered *.sql migrations. */
  migrationsDir: string;
  /** Key file for secret config values (env, headers); created 0600 if missing. */
  keyPath: string;
  /** How often the writer prunes by itself (the first run comes after min(this, 10 s)); default 1 hour; 0 turns it off. */
  pruneIntervalMs?: number;
}

export interface DbWriterApi {
  /** Applies pending migrations; refuses a DB newer than this build. */
  migrate(): Promise<Result<{ version: number }>>;

  listServers(): Promise<ServerRecord[]>;
  getServer(name: string): Promise<ServerRecord | null>;
  /** RESOURCE_ALREADY_EXISTS if the name is taken. Audited as server_added. */
  createServer(config: ServerConfig, actor: AuditActor): Promise<Result<ServerRecord>>;
  /** RESOURCE_NOT_FOUND if missing. Audited as server_updated (secret values redacted). */
  updateServer(config: ServerConfig, actor: AuditActor): Promise<Result<ServerRecord>>;
  /** Deletes the server and its preferences. Audited as server_removed. */
  deleteServer(name: string, actor: AuditActor): Promise<Result<null>>;

  /**
   * R4, one transaction: inserts unseen keys (enabled = autoEnable, audited as
   * capability_first_seen), bumps last_seen_at of seen ones, never deletes.
   * Answers every row of this server and type.
   */
  reconcile(server: string, type: CapabilityType, keys: string[], autoEnable: boolean): Promise<Result<PreferenceRow[]>>;
  /** All rows, or one server's. */
  getPreferences(server?: string): Promise<PreferenceRow[]>;
  /** All-or-nothing: RESOURCE_NOT_FOUND naming the first unknown key. Audited per change. */
  setPreferences(server: string, changes: PreferenceChange[], actor: AuditActor): Promise<Result<PreferenceRow[]>>;
  /**
   * The user's words for one known key (`words` already valid): RESOURCE_NOT_FOUND for an
   * unknown key, RESOURCE_ALREADY_EXISTS for a name another key of the server has (as its
   * own or the upstream's). Audited as capability_words_set when something changed.
   */
  setOwnWords(server: string, type: CapabilityType, key: string, words: OwnWords, actor: AuditActor): Promise<Result<PreferenceRow>>;

  audit(actor: AuditActor, eventType: string, server: string | null, payload: Record<string, unknown>): Promise<void>;
  listAudit(filter: { server?: string; event_type?: string; since?: string; limit?: number }): Promise<AuditEntry[]>;

  /** Appends a batch of invocation records in one transaction (the router batches them off the call path). */
  recordInvocations(records: InvocationRecord[]): Promise<void>;
  /** Newest first. */
  listInvocations(filter: { server?: string; status?: InvocationStatus; since?: string; limit?: number }): Promise<InvocationRow[]>;
  listRetention(): Promise<RetentionPolicy[]>;
  /** days null = keep forever. Audited as retention_changed. RESOURCE_NOT_FOUND for an unknown table. */
  setRetention(table: string, days: number | null, actor: AuditActor): Promise<Result<RetentionPolicy>>;
  /** Deletes rows older than each policy, in small batches so other writes interleave. */
  prune(): Promise<Record<RetentionTable, number>>;

  /** Every MCP client credential (names and token hashes), by name. */
  listClients(): Promise<ClientCredential[]>;
  /**
   * `tokenHash`: hex SHA-256 of the client's token; `toolset`: the one set it sees (null: the whole surface).
   * RESOURCE_ALREADY_EXISTS if the name is taken, RESOURCE_NOT_FOUND for an unknown toolset. Audited as client_added.
   */
  addClient(name: string, tokenHash: string, actor: AuditActor, toolset?: string | null): Promise<Result<ClientCredential>>;
  /** Binds a client to a toolset (null: unbinds). RESOURCE_NOT_FOUND for an unknown client or toolset. Audited as client_bound. */
  bindClient(name: string, toolset: string | null, actor: AuditActor): Promise<Result<ClientCredential>>;

  /** Every toolset, by name. */
  listToolsets(): Promise<ToolsetRecord[]>;
  /** RESOURCE_ALREADY_EXISTS if the name is taken. Audited as toolset_added. */
  createToolset(spec: ToolsetSpec, actor: AuditActor): Promise<Result<ToolsetRecord>>;
  /** Replaces the spec of an existing toolset. RESOURCE_NOT_FOUND if missing. Audited as toolset_updated. */
  updateToolset(spec: ToolsetSpec, actor: AuditActor): Promise<Result<ToolsetRecord>>;
  /** RESOURCE_NOT_FOUND if missing, RESOURCE_IN_USE while a client is bound to it. Audited as toolset_removed. */
  deleteToolset(name: string, actor: AuditActor): Promise<Result<null>>;
  /** RESOURCE_NOT_FOUND if missing. Audited as client_revoked. */
  revokeClient(name: string, actor: AuditActor): Promise<Result<null>>;

  /** An HTTP/SSE upstream's OAuth state, opened (null: none); INTERNAL when it nests too deep to read. Never audited, never published. */
  getOAuth(server: string): Promise<Result<OAuthRecord | null>>;
  /** Sealed at rest; null forgets it. */
  saveOAuth(server: string, record: OAuthRecord | null): Promise<void>;

  /** Checkpoints WAL and closes the handle. */
  close(): Promise<void>;
}

/** A named MCP client's credential as stored: the token itself is never kept. */
export interface ClientCredential {
  name: string;
  /** Hex SHA-256 of the token. */
  token_hash: string;
  created_at: string;
  /** The toolset the client is bound to; null: the whole enabled surface. */
  toolset: string | null;
}

export type RetentionTable = 'audit' | 'invocations';

export interface RetentionPolicy {
  table: RetentionTable;
  /** null: forever. */
  days: number | null;
}

export type InvocationRow = InvocationRecord & { id: number };
