// Bundles the compiled actor worker (dist/workers/actor/main.js) into one entry
// file, with what it imports dynamically in chunks/: a worker then parses one
// module instead of resolving and loading dozens, which is most of its start-up
// CPU, and only the chunks its upstream needs.
// Run after `tsc` (npm run build). src/paths.ts falls back to main.js when
// this bundle is older than it (after a bare `tsc`).
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const actor = join(root, 'dist', 'workers', 'actor');

// Chunk names carry a hash: without this, every build would leave the last one's behind.
rmSync(join(actor, 'chunks'), { recursive: true, force: true });
await build({
  entryPoints: [join(actor, 'main.js')],
  outdir: actor,
  entryNames: 'bundle',
  // What is imported dynamically (the OAuth code: workers/actor/oauth/sdk.ts) becomes a chunk of
  // its own, parsed only by an actor that needs it.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
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
