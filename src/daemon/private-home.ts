// $COFFER_HOME holds the key, the sealed configs, invocation history and the API
// token: only its owner may enter it. Every file coffer creates there is 0600 and
// every directory 0700; a home made earlier with looser modes is tightened.
// Every directory on the way to it must be closed to other users too, or one
// of them could rename the home (or a link to it) and put theirs in its place.
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { octal, swapRisk } from './swap-risk.js';

const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

/** The files coffer keeps directly in the home (logs/ is walked besides, with its folders). */
const HOME_FILES = ['coffer.db', 'coffer.db-wal', 'coffer.db-shm', 'secret.key', 'daemon.json', 'daemon.lock', 'database.opening'];

/** A home coffer will not use: not a directory, or another user's (its owner could read or swap everything in it). */
export class HomeNotPrivateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HomeNotPrivateError';
  }
}

function statOrNull(path: string, follow = true): Stats | null {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** chmod to `mode` when group or others have any access; says what it did. */
function tighten(path: string, stats: Stats, mode: number, notes: string[]): void {
  if ((stats.mode & 0o077) === 0) return;
  chmodSync(path, mode);
  notes.push(`${path} was ${octal(stats.mode)} (open to other users): now ${octal(mode)}`);
}

/** Creates `path` 0700, or checks the directory there: it must be `owner`'s; group and others lose their access. */
function privateDirectory(path: string, what: string, owner: number | undefined, notes: string[]): void {
  const stats = statOrNull(path);
  if (stats === null) return void mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!stats.isDirectory()) throw new HomeNotPrivateError(`${what} ${path} is not a directory: choose another with --home or COFFER_HOME`);
  if (owner !== undefined && stats.uid !== owner) {
    throw new HomeNotPrivateError(
      `${what} ${path} belongs to uid ${stats.uid}, not to you (uid ${owner}): its owner could read coffer's secrets; choose a directory of your own with --home or COFFER_HOME`,
    );
  }
  tighten(path, stats, PRIVATE_DIR_MODE, notes);
}

/**
 * Creates the home and its logs/ (0700), or checks an existing one: one that is not
 * `owner`'s (default: this process's user) is refused (HomeNotPrivateError); one open
 * to group or others is tightened, with the files coffer keeps in it. Answers one
 * note per change, for the caller to report.
 */
export function ensureHome(home: string, owner = process.getuid?.()): string[] {
  const notes: string[] = [];
  const logs = join(home, 'logs');
  privateDirectory(home, 'COFFER_HOME', owner, notes);
  if (owner !== undefined) noOtherCanSwap(home, owner);
  privateDirectory(logs, 'the log directory', owner, notes);
  tightenAll([...HOME_FILES.map((name) => join(home, name)), logs], notes);
  return notes;
}

/** Refuses a home that a user other than `owner` (or root) could replace (see swapRisk). */
function noOtherCanSwap(home: string, owner: number): void {
  const risk = swapRisk(home, owner);
  if (risk) {
    throw new HomeNotPrivateError(`COFFER_HOME ${home}: ${risk}, so another user could put their own directory in its place and read coffer's secrets: choose a home whose every parent directory is yours or root's, with --home or COFFER_HOME`);
  }
}

/** Files 0600, directories 0700 and their entries likewise (logs/upstreams/ sits inside logs/); links are not followed. */
function tightenAll(paths: string[], notes: string[]): void {
  for (const path of paths) {
    const stats = statOrNull(path, false);
    if (stats?.isFile()) tighten(path, stats, PRIVATE_FILE_MODE, notes);
    else if (stats?.isDirectory()) {
      tighten(path, stats, PRIVATE_DIR_MODE, notes);
      tightenAll(readdirSync(path).map((name) => join(path, name)), notes);
    }
  }
}
