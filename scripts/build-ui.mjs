// Builds the web UI into dist/ui: ui/src/main.ts bundled by esbuild into
// app.js, plus the static files beside it. No CDN: everything the page loads
// is in that folder, served by the daemon. Run after `tsc` (npm run build).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'ui');
const out = join(root, 'dist', 'ui');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(source, 'src', 'main.ts')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  tsconfig: join(source, 'tsconfig.json'),
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css', 'favicon.svg']) copyFileSync(join(source, file), join(out, file));
