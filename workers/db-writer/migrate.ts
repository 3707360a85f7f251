// Schema versioning: numbered SQL files applied in order, one transaction each,
// the version kept in PRAGMA user_version.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Result } from '../../src/protocol/errors.js';

export interface Migration {
  version: number;
  file: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d+)_[A-Za-z0-9_-]+\.sql$/;

/** The migrations of a folder, numbered 1..N without gaps (anything else is a packaging bug). */
export function readMigrations(dir: string): Migration[] {
  const migrations = readdirSync(dir)
    .map((file) => ({ file, match: MIGRATION_FILE.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({ version: Number(match[1]), file, sql: readFileSync(join(dir, file), 'utf8') }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migrations in ${dir} must be numbered 1..N without gaps or duplicates; found ${migration.file} at position ${index + 1}`);
    }
  });
  return migrations;
}

export function schemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Refuses, before anything is written, a database made by a newer build. */
export function checkNotNewer(db: Database, migrations: Migration[], dbPath: string): Result<null> {
  const current = schemaVersion(db);
  const supported = migrations.length;
  if (current <= supported) return { ok: true, value: null };
  return {
    ok: false,
    error: {
      code: 'CONFIG_INVALID',
      message: `${dbPath} has schema version ${current}, but this coffer only knows up to ${supported}: upgrade coffer (the database was left untouched)`,
      details: { db_path: dbPath, db_version: current, supported_version: supported },
    },
  };
}

/** Applies every pending migration; a failing file is rolled back and named, a locked database named as such. */
export function applyMigrations(db: Database, migrations: Migration[], dbPath: string): Result<{ version: number }> {
  for (const migration of migrations) {
    // Read first: an up-to-date database takes no write lock, so a process holding one (a sqlite3 shell) does not stop a start.
    if (schemaVersion(db) >= migration.version) continue;
    // IMMEDIATE, and the version re-read inside, so two openers cannot apply one file twice.
    const apply = db.transaction(() => {
      if (schemaVersion(db) >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    try {
      apply.immediate();
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
        return {
          ok: false,
          error: {
            code: 'INTERNAL',
            message: `${dbPath} is locked by another process (another coffer on this COFFER_HOME, or a sqlite3 shell): migration ${migration.file} was not applied and the database is unchanged; stop that process and start again`,
            details: { db_path: dbPath, file: migration.file, version: migration.version },
          },
        };
      }
      return {
        ok: false,
        error: {
          code: 'INTERNAL',
          message: `migration ${migration.file} failed and was rolled back: ${(error as Error).message}`,
          details: { file: migration.file, version: migration.version },
        },
      };
    }
  }
  return { ok: true, value: { version: schemaVersion(db) } };
}
