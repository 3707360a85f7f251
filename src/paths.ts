// Where things are on disk: the compiled tree (dist/) and the repository root
// beside it (migrations/ are read from there at run time).
import { statSync } from 'node:fs';
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

/**
 * The actor worker's entry: boot.cjs, which runs the actor's scripts
 * (`ACTOR_SCRIPTS`, made by `npm run build`: scripts/build-actor.mjs) with their
 * code cache, unless those are older than the compiled main.js (a bare `tsc`
 * since), which is then loaded as is. Decided once per process: it is asked for
 * every actor started (hundreds at start-up), on the main thread.
 */
export function actorEntry(): string {
  return (chosenActorEntry ??= newestActorEntry());
}

/** The actor's bundle and its chunks, as scripts; `actor.js` is the bundle's entry. */
export const ACTOR_SCRIPTS = workerFile('actor/script');

let chosenActorEntry: string | undefined;

function newestActorEntry(): string {
  const main = workerFile('actor/main.js');
  try {
    return statSync(join(ACTOR_SCRIPTS, 'actor.js')).mtimeMs >= statSync(main).mtimeMs ? workerFile('actor/boot.cjs') : main;
  } catch {
    return main;
  }
}

/** Where the actors keep the V8 code caches of their scripts (workers/actor/code-cache.cts). */
export function actorCodeCacheDir(home: string): string {
  return join(home, 'cache', 'actor-code');
}

/**
 * Where the upstreams' logs go (`<server>.log` each): a folder of their own, so
 * no server name can write into coffer's logs (daemon.log, shim.log) beside it.
 */
export function upstreamLogDir(home: string): string {
  return join(home, 'logs', 'upstreams');
}
