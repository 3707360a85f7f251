// The web UI's built files (dist/ui, made by scripts/build-ui.mjs), read once
// at start and served from memory with their content type, an ETag and the
// security headers. The page has no inline script or style, so the CSP can
// be `default-src 'self'` (which also covers the same-origin admin WebSocket).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { sendBuffered, type IncomingRequest, type ResponseState } from '../http/bridge.js';
import { DIST_ROOT } from '../paths.js';

const UI_DIR = join(DIST_ROOT, 'ui');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // The page's URL never carries a secret once loaded, but nothing needs a Referer either.
  'referrer-policy': 'no-referrer',
};

export interface Asset {
  body: Buffer;
  headers: Record<string, string>;
  etag: string;
}

export interface AssetResponse {
  status: 200 | 304 | 503;
  headers: Record<string, string>;
  body: Buffer;
}

export class UiAssets {
  private constructor(private readonly byPath: Map<string, Asset>) {}

  /** Every file of `dir` with a known type; an empty set when the UI was not built. */
  static load(dir = UI_DIR): UiAssets {
    const byPath = new Map<string, Asset>();
    if (!existsSync(dir)) return new UiAssets(byPath);
    for (const name of readdirSync(dir)) {
      const type = CONTENT_TYPES[extname(name)];
      if (!type) continue;
      const body = readFileSync(join(dir, name));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      // no-cache: the browser revalidates (a 304 costs nothing here), so a rebuilt UI shows at once.
      const headers = { 'content-type': type, 'cache-control': 'no-cache', etag, ...SECURITY_HEADERS };
      byPath.set(`/${name}`, { body, headers, etag });
    }
    const index = byPath.get('/index.html');
    if (index) byPath.set('/', index);
    return new UiAssets(byPath);
  }

  /** A GET of a UI file, or of `/` even when the UI was not built (to say so). */
  serves(method: string, path: string): boolean {
    return method === 'GET' && (path === '/' || this.byPath.has(path));
  }

  /** The response for a request `serves` accepted; 304 when the browser's copy is current. */
  respond(path: string, ifNoneMatch: string | undefined): AssetResponse {
    const asset = this.byPath.get(path);
    if (!asset) {
      return { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS }, body: Buffer.from('The coffer web UI is not built: run `npm run build`.\n') };
    }
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === asset.etag)) {
      return { status: 304, headers: { etag: asset.etag, 'cache-control': 'no-cache' }, body: Buffer.alloc(0) };
    }
    return { status: 200, headers: asset.headers, body: asset.body };
  }

  send(state: ResponseState, incoming: IncomingRequest): void {
    const response = this.respond(incoming.path, incoming.headers['if-none-match']);
    sendBuffered(state, response.status, response.headers, response.body);
  }
}
