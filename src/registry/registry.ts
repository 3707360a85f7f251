// The registry service: registering, changing and removing upstream servers.
// The DB writer persists; the pool starts and stops actors; this keeps the
// in-memory copy of every config that the router's policy lookups read.
import type { AuditActor, ServerRecord } from '../protocol/db.js';
import { CofferError, type Result } from '../protocol/errors.js';
import { OWN_PREFIX, prefixOf, type ServerConfig } from '../protocol/server-config.js';
import { CALL_TOOL, SEARCH_TOOL } from '../search/meta-tools.js';
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import { parseServerConfig, redactConfig } from './server-config.js';
import { applyServerPatch } from './server-patch.js';
import { DEFAULT_NAME_BUDGET, prefixProblem } from '../router/names.js';
import { OneAtATime } from '../supervision/one-at-a-time.js';

export interface ServerHealth {
  state: string;
  since: string | null;
  attempts: number;
  last_error: string | null;
  degraded: boolean;
  /** The protocol version negotiated with the upstream and its era (null while not connected). */
  protocol_version: string | null;
  era: 'legacy' | 'modern' | null;
}

export type ServerView = ServerConfig & { created_at: string; updated_at: string; health: ServerHealth };

export interface RegistryHooks {
  isDegraded(server: string): boolean;
  /** A server joined, left or changed: every downstream list may differ. */
  surfaceChanged(server: string, action: 'added' | 'updated' | 'removed'): void;
  /** The longest exposed tool or prompt name (router/names.ts); a namespace must leave room in it. Default 64. */
  nameBudget?: number;
}

export interface NamespaceIssue {
  field: 'name' | 'namespace';
  message: string;
  suggestion: string;
}

/**
 * A namespace whose names model hosts would refuse, that leaves no room for a
 * readable name, or a prefix that is coffer's own (its meta-tools' names would
 * be the server's): refused, with one that fits.
 */
function namespaceIssue(config: ServerConfig, budget: number): NamespaceIssue | null {
  const own = prefixOf(config) === OWN_PREFIX;
  const problem = own ? ownPrefixProblem() : prefixProblem(config.namespace, budget);
  return problem && { ...problem, field: own && config.namespace === '' ? 'name' : 'namespace' };
}

function namespaceRefusal(issue: NamespaceIssue | null): CofferError | null {
  if (!issue) return null;
  return new CofferError('NAMESPACE_INVALID', `invalid server config: ${issue.message}`, { errors: [{ field: issue.field, message: issue.message }], suggestion: issue.suggestion });
}

function ownPrefixProblem(): { message: string; suggestion: string } {
  const suggestion = `${OWN_PREFIX}-upstream`;
  return { message: `"${OWN_PREFIX}" is coffer's own prefix (${SEARCH_TOOL}, ${CALL_TOOL}): use --namespace ${suggestion}`, suggestion };
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new CofferError(result.error.code, result.error.message, result.error.details);
  return result.value;
}

/** A change to these restarts the actor; description, policy and namespace (the router's business) do not. */
function needsRestart(before: ServerConfig, after: ServerConfig): boolean {
  const actorPart = (config: ServerConfig) => JSON.stringify([config.transport, config.timeouts, config.session_mode, config.protocol]);
  return actorPart(before) !== actorPart(after);
}

/** Every server must stay reachable by its own prefix (namespace, or name when unprefixed): two servers never share one. */
function prefixClash(config: ServerConfig, others: Iterable<ServerConfig>): CofferError | null {
  const prefix = prefixOf(config);
  for (const other of others) {
    if (other.name === config.name || prefixOf(other) !== prefix) continue;
    return new CofferError('CONFIG_INVALID', `invalid server config: namespace: "${prefix}" is already the prefix of server '${other.name}'; choose another namespace`, {
      errors: [{ field: config.namespace === '' ? 'name' : 'namespace', message: `"${prefix}" is already the prefix of server '${other.name}'` }],
    });
  }
  return null;
}

export class Registry {
  private configs = new Map<string, ServerConfig>();
  /**
   * Each change checks the other configs (a prefix taken), then writes and starts or stops actors
   * across awaits; interleaved, two servers could take one prefix, or an update could start an
   * actor again for a server removed meanwhile.
   */
  private readonly changes = new OneAtATime();
  private readonly budget: number;

  constructor(
    private readonly writer: DbWriterCalls,
    private readonly pool: UpstreamPool,
    private readonly hooks: RegistryHooks,
  ) {
    this.budget = hooks.nameBudget ?? DEFAULT_NAME_BUDGET;
  }

  /** Reads every server and starts the enabled ones. */
  async load(): Promise<void> {
    await this.loadConfigs();
    this.startEnabled();
  }

  /** Reads every server without starting any: changes made before startEnabled() start nothing twice. */
  async loadConfigs(): Promise<void> {
    for (const record of await this.writer.listServers()) this.configs.set(record.config.name, record.config);
  }

  /** Starts every enabled server not running yet. */
  startEnabled(): void {
    for (const config of this.configs.values()) if (config.enabled) this.pool.start(config);
  }

  /** What add or update would refuse in `config`'s namespace, else null. One stored before this rule stays until it is changed: refusing any other update would strand the server. */
  namespaceIssue(config: ServerConfig): NamespaceIssue | null {
    return this.configs.get(config.name)?.namespace === config.namespace ? null : namespaceIssue(config, this.budget);
  }

  config(name: string): ServerConfig | undefined {
    return this.configs.get(name);
  }

  all(): ServerConfig[] {
    return [...this.configs.values()];
  }

  async list(): Promise<ServerView[]> {
    return (await this.writer.listServers()).map((record) => this.view(record));
  }

  async get(name: string): Promise<ServerView> {
    return this.view(await this.record(name));
  }

  add(input: unknown, actor: AuditActor): Promise<ServerView> {
    return this.changes.run(() => this.added(input, actor));
  }

  update(name: string, patch: unknown, actor: AuditActor): Promise<ServerView> {
    return this.changes.run(() => this.updated(name, patch, actor));
  }

  setEnabled(name: string, enabled: boolean, actor: AuditActor): Promise<ServerView> {
    return this.update(name, { enabled }, actor);
  }

  remove(name: string, actor: AuditActor): Promise<void> {
    return this.changes.run(() => this.removed(name, actor));
  }

  private async added(input: unknown, actor: AuditActor): Promise<ServerView> {
    const config = unwrap(parseServerConfig(input));
    const clash = namespaceRefusal(namespaceIssue(config, this.budget)) ?? prefixClash(config, this.configs.values());
    if (clash) throw clash;
    const record = unwrap(await this.writer.createServer(config, actor));
    this.configs.set(config.name, record.config);
    if (config.enabled) this.pool.start(record.config);
    this.hooks.surfaceChanged(config.name, 'added');
    return this.view(record);
  }

  private async updated(name: string, patch: unknown, actor: AuditActor): Promise<ServerView> {
    const before = (await this.record(name)).config;
    const after = unwrap(applyServerPatch(before, patch));
    const clash = namespaceRefusal(this.namespaceIssue(after)) ?? prefixClash(after, this.configs.values());
    if (clash) throw clash;
    const record = unwrap(await this.writer.updateServer(after, actor));
    this.configs.set(name, record.config);
    if (!after.enabled) await this.pool.stop(name);
    else if (!before.enabled || needsRestart(before, after)) {
      await this.pool.stop(name);
      this.pool.start(record.config);
    }
    this.hooks.surfaceChanged(name, 'updated');
    return this.view(record);
  }

  private async removed(name: string, actor: AuditActor): Promise<void> {
    unwrap(await this.writer.deleteServer(name, actor));
    this.configs.delete(name);
    await this.pool.stop(name);
    this.hooks.surfaceChanged(name, 'removed');
  }

  private async record(name: string): Promise<ServerRecord> {
    const record = await this.writer.getServer(name);
    if (!record) throw new CofferError('RESOURCE_NOT_FOUND', `no server named '${name}': see 'coffer mcp list'`);
    return record;
  }

  private view(record: ServerRecord): ServerView {
    const status = this.pool.status(record.config.name);
    return {
      ...redactConfig(record.config),
      created_at: record.created_at,
      updated_at: record.updated_at,
      health: {
        state: status ? status.state : record.config.enabled ? 'stopped' : 'disabled',
        since: status ? new Date(status.since).toISOString() : null,
        attempts: status?.attempts ?? 0,
        last_error: status?.lastError ?? null,
        degraded: this.hooks.isDegraded(record.config.name),
        protocol_version: status?.protocolVersion ?? null,
        era: status?.era ?? null,
      },
    };
  }
}
