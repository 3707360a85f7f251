// Whether a user other than the owner could put their own file or directory in
// the place of a path: an entry on the way to it that sits in a directory they
// may write to. The home (its secrets) and the config file (the commands coffer
// runs) are each refused when so.
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, parse, resolve } from 'node:path';

const STICKY = 0o1000;
export const WRITABLE_BY_OTHERS = 0o022;

export const octal = (mode: number): string => `0${(mode & 0o777).toString(8)}`;

/**
 * Why a user other than `owner` (or root) could replace `path`, or null: each
 * entry on the way to it — every directory of its real path, and every link
 * the path as given goes through — must sit in a directory of `owner`'s or
 * root's that others cannot write to, or that is sticky with the entry
 * `owner`'s or root's (only an entry's owner may rename it there, as in /tmp).
 */
export function swapRisk(path: string, owner: number): string | null {
  const trusted = (uid: number) => uid === owner || uid === 0;
  const checkEntry = (entry: string): string | null => {
    const parent = dirname(entry);
    const folder = statSync(parent);
    if (!trusted(folder.uid)) return `${parent} belongs to uid ${folder.uid}`;
    if ((folder.mode & WRITABLE_BY_OTHERS) === 0) return null;
    if ((folder.mode & STICKY) === 0) return `${parent} can be written by other users (mode ${octal(folder.mode)}, not sticky)`;
    const own = lstatSync(entry);
    return trusted(own.uid) ? null : `${entry} belongs to uid ${own.uid}, in ${parent}, which others can write to`;
  };
  const checkPath = (real: string): string | null => {
    const { root } = parse(real);
    for (let entry = real; entry !== root; entry = dirname(entry)) {
      const risk = checkEntry(entry);
      if (risk) return risk;
    }
    return null;
  };
  const risk = checkPath(realpathSync(path));
  if (risk) return risk;
  const given = resolve(path);
  for (let entry = given; entry !== parse(given).root; entry = dirname(entry)) {
    if (!lstatSync(entry).isSymbolicLink()) continue;
    const through = checkPath(join(realpathSync(dirname(entry)), basename(entry)));
    if (through) return through;
  }
  return null;
}
