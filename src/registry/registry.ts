// The registry service: registering, showing and removing upstream servers.
// The DB writer persists; the pool starts and stops actors; nothing here
// waits on an upstream.
import type { AuditActor, ServerRecord } from '../protocol/db.js';
import { CofferError } from '../protocol/errors.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import { parseServerConfig, redactConfig } from './server-config.js';

export interface ServerHealth {
  state: string;
  since: string | null;
  attempts: number;
  last_error: string | null;
  degraded: boolean;
}

export type ServerView = ServerConfig & { created_at: string; updated_at: string; health: ServerHealth };

export interface RegistryEvents {
  /** A server joined or left the surface: every downstream list may differ. */
  surfaceChanged(server: string): void;
}

function unwrap<T>(result: { ok: true; value: T } | { ok: false; error: { code: CofferError['code']; message: string; details?: unknown } }): T {
  if (!result.ok) throw new CofferError(result.error.code, result.error.message, result.error.details);
  return result.value;
}

export class Registry {
  constructor(
    private readonly writer: DbWriterCalls,
    private readonly pool: UpstreamPool,
    private readonly isDegraded: (server: string) => boolean,
    private readonly events: RegistryEvents,
  ) {}

  async list(): Promise<ServerView[]> {
    return (await this.writer.listServers()).map((record) => this.view(record));
  }

  async get(name: string): Promise<ServerView> {
    return this.view(await this.record(name));
  }

  async add(input: unknown, actor: AuditActor): Promise<ServerView> {
    const config = unwrap(parseServerConfig(input));
    const record = unwrap(await this.writer.createServer(config, actor));
    if (config.enabled) this.pool.start(config);
    this.events.surfaceChanged(config.name);
    return this.view(record);
  }

  async remove(name: string, actor: AuditActor): Promise<void> {
    unwrap(await this.writer.deleteServer(name, actor));
    await this.pool.stop(name);
    this.events.surfaceChanged(name);
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
        degraded: this.isDegraded(record.config.name),
      },
    };
  }
}
