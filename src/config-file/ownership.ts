// Which servers and toolsets the config file owns, kept beside the database
// ($COFFER_HOME/config-file.json, 0600) so a server taken out of the file while
// the daemon was stopped is removed at the next start, and one registered
// through the API is never mistaken for one the file used to declare.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Ownership {
  /** The file that declared them, as given to --config. */
  path: string;
  servers: string[];
  toolsets: string[];
  applied_at: string;
}

export const ownershipPath = (home: string): string => join(home, 'config-file.json');

export function readOwnership(home: string): Ownership | null {
  try {
    const parsed = JSON.parse(readFileSync(ownershipPath(home), 'utf8')) as Partial<Ownership>;
    return typeof parsed.path === 'string' && Array.isArray(parsed.servers) ? { path: parsed.path, servers: parsed.servers.map(String), toolsets: (parsed.toolsets ?? []).map(String), applied_at: String(parsed.applied_at) } : null;
  } catch {
    return null;
  }
}

/** Written whole and renamed into place: a crash leaves the old record or the new one. */
export function writeOwnership(home: string, ownership: Ownership): void {
  const target = ownershipPath(home);
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(ownership, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, target);
}

export function clearOwnership(home: string): void {
  rmSync(ownershipPath(home), { force: true });
}
