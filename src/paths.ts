// Where things are on disk: the compiled tree (dist/) and the repository root
// beside it (migrations/ are read from there at run time).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const distSrc = dirname(fileURLToPath(import.meta.url));
export const DIST_ROOT = resolve(distSrc, '..');
export const PROJECT_ROOT = resolve(DIST_ROOT, '..');
export const MIGRATIONS_DIR = join(PROJECT_ROOT, 'migrations');
export const CLI_ENTRY = join(DIST_ROOT, 'src', 'cli', 'main.js');

/** Compiled path of a worker entry under workers/, e.g. workerFile('actor/main.js'). */
export function workerFile(relative: string): string {
  return join(DIST_ROOT, 'workers', relative);
}
