// coffer's version, from the package.json of the install: what `coffer --version`
// prints, what the daemon reports as serverInfo and what the actor presents to
// upstreams as clientInfo, so the three cannot disagree.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Searched upwards rather than taken from paths.ts: the actor's one-file bundle
 * lives at a different depth of dist/ than the compiled src/ tree.
 */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) return (JSON.parse(readFileSync(candidate, 'utf8')) as { version: string }).version;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const VERSION: string = packageVersion();
