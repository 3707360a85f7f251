// The config file names commands coffer runs as its user: a file another user
// owns, may write, or could put in its place would let them run theirs. Such a
// file is refused, as ssh refuses a key or config others can write.
import { statSync } from 'node:fs';
import { octal, swapRisk, WRITABLE_BY_OTHERS } from '../daemon/swap-risk.js';

/** Why another user than `owner` (or root) could decide what the file at `path` says, or null. */
export function othersControl(path: string, owner: number): string | null {
  const stats = statSync(path);
  if (stats.uid !== owner && stats.uid !== 0) return `belongs to uid ${stats.uid}, not to you (uid ${owner}): its owner could make coffer run any command as you; use a file of your own`;
  if ((stats.mode & WRITABLE_BY_OTHERS) !== 0) return `can be written by other users (mode ${octal(stats.mode)}): any of them could make coffer run a command as you; chmod go-w it`;
  const risk = swapRisk(path, owner);
  return risk && `${risk}, so another user could put their own file in its place: keep it in a directory only you (or root) can write to`;
}
