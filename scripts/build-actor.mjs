// Bundles the compiled actor worker (dist/workers/actor/main.js) into one file:
// a worker then parses one module instead of resolving and loading dozens,
// which is most of its start-up CPU.
// Run after `tsc` (npm run build). src/paths.ts falls back to main.js when
// this bundle is older than it (after a bare `tsc`).
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const actor = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'workers', 'actor');

await build({
  entryPoints: [join(actor, 'main.js')],
  outfile: join(actor, 'bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The native accelerator is optional and loaded by require(): keep it out of the bundle.
  external: ['msgpackr-extract'],
  // comlink's UMD build and msgpackr use require(); an ESM bundle has none of its own.
  banner: { js: 'import { createRequire as __cofferRequire } from "node:module"; const require = __cofferRequire(import.meta.url);' },
  logLevel: 'warning',
});
