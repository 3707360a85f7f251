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
// An actor only packs lists. msgpackr's Node entry also loads its native accelerator
// (msgpackr-extract), which only speeds up unpacking, at a cost to every worker's start
// and RSS; its plain JavaScript build packs the same bytes.
const msgpackrWithoutNative = {
  name: 'msgpackr-without-native',
  setup(build) {
    build.onResolve({ filter: /^msgpackr$/ }, () => ({ path: join(root, 'node_modules', 'msgpackr', 'index.js') }));
  },
};

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
  plugins: [msgpackrWithoutNative],
  logLevel: 'warning',
});
