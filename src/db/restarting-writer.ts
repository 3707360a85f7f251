// Keeps a DB writer running: when the worker dies it is replaced (after a short
// delay), and the one `api` object everyone holds forwards to whichever writer
// is current. A call made while there is none waits for the replacement up to a
// bound, then fails with INTERNAL: an error to the caller, never a silent drop.
import type { DbInit } from '../protocol/db.js';
import { CofferError, type ErrorBody, type Result } from '../protocol/errors.js';
import { openDbWriter, WRITER_CALLS, type DbWriter, type DbWriterCalls, type DbWriterOptions } from './writer-handle.js';

export interface RestartingWriterOptions extends DbWriterOptions {
  /** Delay before a replacement is started. */
  restartDelayMs?: number;
  /** How long a call waits for a replacement writer. */
  waitMs?: number;
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
  const { restartDelayMs = 500, waitMs = 10_000, onRestart, onDeath, onCall, ...writerOptions } = options;
  let closed = false;
  let current: DbWriter | null = null;
  let ready: Promise<DbWriter | null> = Promise.resolve(null);

  const open = (): Promise<Result<DbWriter>> => openWriter(init, { ...writerOptions, onDeath: died });
  function died(error: ErrorBody): void {
    onDeath?.(error);
    current = null;
    if (closed) return;
    ready = (async () => {
      for (let attempt = 0; !closed; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, restartDelayMs * Math.min(2 ** attempt, 20)));
        const reopened = await open();
        if (reopened.ok) {
          current = reopened.value;
          onRestart?.();
          return current;
        }
      }
      return null;
    })();
  }

  const first = await open();
  if (!first.ok) return first;
  current = first.value;

  const writerNow = async (): Promise<DbWriter> => {
    if (current) return current;
    const replacement = await Promise.race([ready, new Promise<null>((resolve) => setTimeout(() => resolve(null), waitMs).unref())]);
    if (!replacement) throw new CofferError('INTERNAL', `the database writer is down and did not come back within ${waitMs} ms; see the daemon log`);
    return replacement;
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
        await current?.close();
      },
    },
  };
}
