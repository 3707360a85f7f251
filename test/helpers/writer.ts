// A real DB writer on a temporary SQLite file, for writer-level tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { openDbWriter, type DbWriter, type DbWriterOptions } from '../../src/db/writer-handle.js';
import { MIGRATIONS_DIR } from '../../src/paths.js';
import type { DbInit } from '../../src/protocol/db.js';

/** A DbInit in a temporary folder removed after the test. */
export function tempInit(t: Test, prefix: string, extra: Partial<DbInit> = {}): DbInit {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return { dbPath: join(dir, 'coffer.db'), migrationsDir: MIGRATIONS_DIR, keyPath: join(dir, 'secret.key'), ...extra };
}

/** Opens (and migrates) the writer; closed after the test. */
export async function openWriter(t: Test, init: DbInit, options: DbWriterOptions = {}): Promise<DbWriter> {
  const opened = await openDbWriter(init, options);
  if (!opened.ok) throw new Error(`writer did not open: ${opened.error.message}`);
  t.teardown(() => opened.value.close());
  return opened.value;
}

export { sleep, waitFor } from './wait.js';
/** An ISO timestamp `ms` ago. */
export const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
