// The toolset service: adding, changing and removing toolsets and binding
// clients to them. The DB writer persists; this keeps the compiled views that
// lists and calls read, and tells its listener what changed once committed.
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { AuditActor, ClientCredential } from '../protocol/db.js';
import { CofferError } from '../protocol/errors.js';
import { toolsetOptions, type ToolsetRecord, type ToolsetSpec } from '../protocol/toolsets.js';
import { invalid, isJsonObject } from '../registry/server-config.js';
import { unwrap } from '../registry/registry.js';
import type { ServerDirectory } from '../router/namespaces.js';
import { OneAtATime } from '../supervision/one-at-a-time.js';
import { parseToolsetSpec } from './spec.js';
import { ToolsetView } from './view.js';

type ToolsetWriter = Pick<DbWriterCalls, 'listToolsets' | 'createToolset' | 'updateToolset' | 'deleteToolset' | 'bindClient'>;

export type ToolsetAction = 'added' | 'updated' | 'removed';

export interface ToolsetHooks {
  /** Committed: sessions of this toolset may see another list now. */
  toolsetChanged(name: string, action: ToolsetAction): void;
  /** Committed: the client's credential now sees `toolset` (null: the whole surface). */
  clientBound(client: ClientCredential): void;
}

/** The set of a toolset that no longer exists: nothing (a toolset only ever narrows). */
const emptyView = (name: string): ToolsetView => new ToolsetView({ name, description: '', servers: [] });

export class Toolsets {
  private views = new Map<string, ToolsetView>();
  private records = new Map<string, ToolsetRecord>();
  /** An update merges its patch over the record as it stands: two at once would each write over a copy the other changed. */
  private readonly changes = new OneAtATime();

  constructor(
    private readonly writer: ToolsetWriter,
    private readonly servers: ServerDirectory,
    private readonly hooks: ToolsetHooks,
  ) {}

  async load(): Promise<void> {
    for (const record of await this.writer.listToolsets()) this.keep(record);
  }

  list(): ToolsetRecord[] {
    return [...this.records.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  get(name: string): ToolsetRecord {
    const record = this.records.get(name);
    if (!record) throw new CofferError('RESOURCE_NOT_FOUND', `no toolset named "${name}": see 'coffer toolset list'`, { toolset: name });
    return record;
  }

  has(name: string): boolean {
    return this.records.has(name);
  }

  /** What a session of this toolset sees; null: the whole surface. A removed toolset's sessions see nothing. */
  viewOf(name: string | null): ToolsetView | null {
    return name === null ? null : (this.views.get(name) ?? emptyView(name));
  }

  add(input: unknown, actor: AuditActor): Promise<ToolsetRecord> {
    return this.changes.run(() => this.added(input, actor));
  }

  /** `patch`: description, servers, mode and/or pinned; what is given replaces what was. */
  update(name: string, patch: unknown, actor: AuditActor): Promise<ToolsetRecord> {
    return this.changes.run(() => this.updated(name, patch, actor));
  }

  remove(name: string, actor: AuditActor): Promise<void> {
    return this.changes.run(() => this.removed(name, actor));
  }

  private async added(input: unknown, actor: AuditActor): Promise<ToolsetRecord> {
    const record = unwrap(await this.writer.createToolset(this.validated(input), actor));
    this.keep(record);
    this.hooks.toolsetChanged(record.name, 'added');
    return record;
  }

  private async updated(name: string, patch: unknown, actor: AuditActor): Promise<ToolsetRecord> {
    const { name: _name, description, servers, mode, pinned } = this.get(name);
    if (!isJsonObject(patch)) return unwrap(invalid([{ field: '(root)', message: 'must be an object {description?, servers?, mode?, pinned?}' }], 'toolset'));
    const record = unwrap(await this.writer.updateToolset(this.validated({ description, servers, ...toolsetOptions({ mode, pinned }), ...patch, name }), actor));
    this.keep(record);
    this.hooks.toolsetChanged(name, 'updated');
    return record;
  }

  private async removed(name: string, actor: AuditActor): Promise<void> {
    unwrap(await this.writer.deleteToolset(name, actor));
    this.records.delete(name);
    this.views.set(name, emptyView(name));
    this.hooks.toolsetChanged(name, 'removed');
  }

  async bind(client: string, toolset: string | null, actor: AuditActor): Promise<ClientCredential> {
    const bound = unwrap(await this.writer.bindClient(client, toolset, actor));
    this.hooks.clientBound(bound);
    return bound;
  }

  /** A valid spec whose servers are registered (a server removed later simply matches nothing). */
  private validated(input: unknown): ToolsetSpec {
    const spec = unwrap(parseToolsetSpec(input));
    const errors = spec.servers.flatMap((rule, index) =>
      this.servers.config(rule.server) ? [] : [{ field: `servers[${index}].server`, message: `no server named "${rule.server}" is registered (see 'coffer mcp list')` }],
    );
    return errors.length === 0 ? spec : unwrap(invalid(errors, 'toolset'));
  }

  private keep(record: ToolsetRecord): void {
    this.records.set(record.name, record);
    this.views.set(record.name, new ToolsetView(record));
  }
}
