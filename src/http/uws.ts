// The one place that loads uWebSockets.js. The package silently falls back to
// a slow JS server when its native binding does not match this Node ABI;
// `nativeBindingLoaded()` lets a test (and the status route) prove it did not.
import { createRequire } from 'node:module';
import type * as Uws from 'uWebSockets.js';

const require = createRequire(import.meta.url);

export const uws: typeof Uws = require('uWebSockets.js');

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

export function nativeBindingLoaded(): boolean {
  return Object.keys(require.cache).some((path) => /uws_[a-z]+_[a-z0-9]+_\d+\.node$/.test(path));
}
