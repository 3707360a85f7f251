// Bundles the compiled actor worker (dist/workers/actor/main.js) into one entry
// file, with what it imports dynamically in chunks/: a worker then parses one
// module instead of resolving and loading dozens, which is most of its start-up
// CPU, and only the chunks its upstream needs.
// The files are written as scripts, not ES modules (dist/workers/actor/script/),
// which the worker entry (workers/actor/boot.cts) runs, linking their require()s
// itself: a worker starts no ES module loader, and Node 20 takes a V8 code cache
// only for a script.
// Run after `tsc` (npm run build). src/paths.ts falls back to main.js when
// this bundle is older than it (after a bare `tsc`).
import { build, transform } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const actor = join(root, 'dist', 'workers', 'actor');
const out = join(actor, 'script');
// An actor only packs lists. msgpackr's Node entry also loads its native accelerator
// (msgpackr-extract), which only speeds up unpacking, at a cost to every worker's start
// and RSS; its plain JavaScript build packs the same bytes.
const msgpackrWithoutNative = {
  name: 'msgpackr-without-native',
  setup(build) {
    build.onResolve({ filter: /^msgpackr$/ }, () => ({ path: join(root, 'node_modules', 'msgpackr', 'index.js') }));
  },
};

const bundled = await build({
  entryPoints: [join(actor, 'main.js')],
  outdir: out,
  entryNames: 'actor',
  // What is imported dynamically (the OAuth code: workers/actor/oauth/sdk.ts) becomes a chunk of
  // its own, parsed only by an actor that needs it. esbuild splits only ES modules: each output
  // becomes a script below.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [msgpackrWithoutNative],
  write: false,
  logLevel: 'warning',
});

// Chunk names carry a hash: without this, every build would leave the last one's behind.
rmSync(out, { recursive: true, force: true });
for (const file of bundled.outputFiles) {
  // import() becomes require() too, so a lazy chunk joins the same set of modules (one
  // instance of each shared chunk); boot.cts passes import.meta.url in.
  const script = await transform(file.text, {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__importMetaUrl' },
    logLevel: 'silent',
  });
  // A warning here is code that would run differently as a script (another import.meta, say).
  if (script.warnings.length > 0) throw new Error(`${file.path}: ${script.warnings.map((warning) => warning.text).join('; ')}`);
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, script.code);
}
