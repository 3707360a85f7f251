// Keeps a DB writer running: when the worker dies it is replaced on the shared
// restart schedule (src/supervision/), and the one `api` object everyone holds
// forwards to whichever writer is current. A call made while there is none
// waits for the replacement up to a bound, then fails with INTERNAL: an error
// to the caller, never a silent drop.
import type { DbInit } from '../protocol/db.js';
import { CofferError, type ErrorBody, type Result } from '../protocol/errors.js';
import { Restarter, type RestartWait } from '../supervision/restarter.js';
import type { RestartSchedule } from '../supervision/restart-schedule.js';
import { openDbWriter, WRITER_CALLS, type DbWriter, type DbWriterCalls, type DbWriterOptions } from './writer-handle.js';

/** The writer is the daemon's memory: it comes back fast, and a crash loop still backs off to seconds, not minutes. */
export const WRITER_RESTART: RestartSchedule = { baseMs: 500, capMs: 10_000, resetAfterMs: 60_000 };

export interface RestartingWriterOptions extends DbWriterOptions {
  restart?: RestartSchedule;
  /** How long a call waits for a replacement writer. */
  waitMs?: number;
  /** Told each time a replacement is scheduled (after a death or a replacement that did not start). */
  onRestartWait?: (wait: RestartWait) => void;
  /** Told each time a replacement is up. */
  onRestart?: () => void;
  /** Each call as it is made; the answer is called once it settled (for the metrics). */
  onCall?: (method: string) => () => void;
}

export interface RestartingWriter {
  readonly api: DbWriterCalls;
  /** A writer is running now (false between a death and its replacement). */
  readonly up: boolean;
  close(): Promise<void>;
}

/** `openWriter` is openDbWriter; a test passes its own to get at the worker it kills. */
export async function openRestartingWriter(
  init: DbInit,
  options: RestartingWriterOptions = {},
  openWriter: (init: DbInit, options: DbWriterOptions) => Promise<Result<DbWriter>> = openDbWriter,
): Promise<Result<RestartingWriter>> {
  const { restart = WRITER_RESTART, waitMs = 10_000, onRestartWait, onRestart, onDeath, onCall, ...writerOptions } = options;
  let closed = false;
  let current: DbWriter | null = null;
  /** Calls waiting for a writer: woken by a replacement that is up, or by close(). */
  const waiting = new Set<() => void>();
  const wake = (): void => {
    for (const resume of [...waiting]) resume();
  };

  const open = (): Promise<Result<DbWriter>> => openWriter(init, { ...writerOptions, onDeath: died });
  const restarter = new Restarter(restart, {
    replace: async () => {
      const reopened = await open();
      if (!reopened.ok) return false;
      // Closed while it started: nobody will ever close it otherwise.
      if (closed) {
        await reopened.value.close();
        return false;
      }
      current = reopened.value;
      onRestart?.();
      wake();
      return true;
    },
    onWait: onRestartWait,
  });
  function died(error: ErrorBody): void {
    onDeath?.(error);
    current = null;
    if (!closed) restarter.died();
  }

  const first = await open();
  if (!first.ok) return first;
  current = first.value;

  const writerNow = async (): Promise<DbWriter> => {
    if (!current && !closed) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resume, waitMs).unref();
        function resume(): void {
          clearTimeout(timer);
          waiting.delete(resume);
          resolve();
        }
        waiting.add(resume);
      });
    }
    if (closed) throw new CofferError('INTERNAL', 'the database writer is closed: the daemon is stopping');
    if (!current) throw new CofferError('INTERNAL', `the database writer is down and did not come back within ${waitMs} ms; see the daemon log`);
    return current;
  };

  const api = Object.fromEntries(
    WRITER_CALLS.map((method) => [
      method,
      async (...args: unknown[]) => {
        const done = onCall?.(method);
        try {
          const writer = await writerNow();
          return await (writer.api[method] as (...a: unknown[]) => Promise<unknown>)(...args);
        } finally {
          done?.();
        }
      },
    ]),
  ) as unknown as DbWriterCalls;

  return {
    ok: true,
    value: {
      api,
      get up() {
        return current !== null && !closed;
      },
      async close() {
        closed = true;
        restarter.stop();
        wake();
        await current?.close();
      },
    },
  };
}
