// Main-thread side of the DB writer worker: spawns it, migrates, hands out its API,
// relays its events (audit entries, periodic prunes), reports its death, and stops it cleanly.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { workerFile } from '../paths.js';
import { Comlink, endpoint } from '../protocol/comlink.js';
import type { AuditEntry, DbInit, DbWriterApi, RetentionTable } from '../protocol/db.js';
import { CofferError, type ErrorBody, type Result } from '../protocol/errors.js';
import type { WriterEvent } from '../../workers/db-writer/events.js';

/** The writer's API without close(): stopping goes through DbWriter.close(). */
export type DbWriterCalls = Omit<DbWriterApi, 'close'>;

export interface DbWriter {
  /** Every call rejects with CofferError INTERNAL once the worker is gone (instead of hanging). */
  readonly api: DbWriterCalls;
  /** Checkpoints the WAL, closes the database and stops the worker. Idempotent. */
  close(): Promise<void>;
}

export interface DbWriterOptions {
  /** Called once if the worker dies without close(): nothing can be persisted after that. */
  onDeath?: (error: ErrorBody) => void;
  /** How long close() waits for the checkpoint before stopping the worker anyway. */
  closeTimeoutMs?: number;
  /** Every audit entry the writer commits, as it commits it (whoever caused it). */
  onAudit?: (entry: AuditEntry) => void;
  /** After each periodic prune of the writer (not after prune() calls, which answer their counts). */
  onPrune?: (pruned: Record<RetentionTable, number>) => void;
  /** A periodic prune failed (the next one runs at the next interval). */
  onPruneError?: (error: ErrorBody) => void;
}

// A record, so the compiler insists every DbWriterApi method is forwarded.
const METHODS: Record<keyof DbWriterApi, true> = {
  migrate: true,
  listServers: true,
  getServer: true,
  createServer: true,
  updateServer: true,
  deleteServer: true,
  reconcile: true,
  getPreferences: true,
  setPreferences: true,
  setOwnWords: true,
  audit: true,
  listAudit: true,
  recordInvocations: true,
  listInvocations: true,
  listRetention: true,
  setRetention: true,
  prune: true,
  listClients: true,
  addClient: true,
  revokeClient: true,
  getOAuth: true,
  saveOAuth: true,
  bindClient: true,
  listToolsets: true,
  createToolset: true,
  updateToolset: true,
  deleteToolset: true,
  close: true,
};

/** Every method of DbWriterCalls, for code that forwards them (restarting-writer.ts). */
export const WRITER_CALLS = Object.keys(METHODS).filter((method) => method !== 'close') as Array<keyof DbWriterCalls>;

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

/**
 * Spawns the writer on init and applies migrations. On failure (a newer database,
 * a broken migration, an unreadable key) the worker is stopped and the error answered.
 */
export function openDbWriter(init: DbInit, options: DbWriterOptions = {}): Promise<Result<DbWriter>> {
  const { worker, events } = spawnDbWriter(init);
  return superviseDbWriter(worker, options, events);
}

/** Starts a writer worker with its events channel; the worker keeps the other end. */
export function spawnDbWriter(init: DbInit): { worker: Worker; events: MessagePort } {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(workerFile('db-writer/main.js'), { workerData: { ...init, events: port2 }, transferList: [port2] });
  return { worker, events: port1 };
}

/**
 * The supervising half of openDbWriter, for a writer worker spawned by the caller
 * (a test that kills it). `events` is the main-thread end of the worker's events
 * channel (spawnDbWriter); without it onAudit / onPrune are never called.
 */
export async function superviseDbWriter(worker: Worker, options: DbWriterOptions = {}, events?: MessagePort): Promise<Result<DbWriter>> {
  const remote = Comlink.wrap<DbWriterApi>(endpoint(worker));
  if (events) {
    // Listeners are called as is: they must not throw.
    events.on('message', (event: WriterEvent) => {
      if (event.type === 'audit') options.onAudit?.(event.entry);
      else if (event.type === 'pruned') options.onPrune?.(event.pruned);
      else if (event.type === 'prune_failed') options.onPruneError?.({ code: 'INTERNAL', message: `periodic prune failed: ${event.message}` });
    });
    // The worker keeps the process alive while it runs; the port alone must not.
    events.unref();
  }

  let started = false;
  let closing = false;
  let lastError: Error | null = null;
  let markDead!: (error: CofferError) => void;
  // Raced against every call: comlink itself would leave calls pending forever on a dead worker.
  const dead = new Promise<never>((_, reject) => {
    markDead = reject;
  });
  dead.catch(() => {});
  worker.on('error', (error) => {
    lastError = error;
  });
  worker.on('exit', (code) => {
    events?.close();
    const message = `the DB writer worker exited (code ${code})${lastError ? `: ${lastError.message}` : ''}`;
    markDead(new CofferError('INTERNAL', closing ? 'the DB writer is closed' : message));
    // Before openDbWriter answers, a death is reported through its Result instead.
    if (started && !closing) options.onDeath?.({ code: 'INTERNAL', message });
  });

  const calls = Object.fromEntries(
    Object.keys(METHODS).map((method) => {
      const call = (remote as unknown as Record<string, AnyMethod>)[method];
      return [method, (...args: unknown[]) => Promise.race([call(...args), dead])];
    }),
  ) as unknown as DbWriterApi;

  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const timeoutMs = options.closeTimeoutMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      try {
        await Promise.race([calls.close(), timeout]);
      } catch {
        // Already dead: nothing left to checkpoint.
      } finally {
        clearTimeout(timer);
      }
      await worker.terminate();
    })();
    return closed;
  };

  try {
    const migrated = await calls.migrate();
    if (!migrated.ok) {
      await close();
      return migrated;
    }
  } catch (error) {
    await close();
    return { ok: false, error: { code: 'INTERNAL', message: `the DB writer did not start: ${(error as Error).message}` } };
  }
  started = true;
  return { ok: true, value: { api: calls, close } };
}
