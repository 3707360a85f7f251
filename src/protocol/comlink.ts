// comlink's ESM build expects browser globals; on Node we load the UMD build
// and its node adapter. Everything that crosses a thread
// boundary with comlink imports it from here.
import { createRequire } from 'node:module';
import type * as ComlinkTypes from 'comlink';
import type { MessagePort, Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

export const Comlink: typeof ComlinkTypes = require('comlink/dist/umd/comlink.js');
const nodeAdapter: (nep: MessagePort | Worker) => ComlinkTypes.Endpoint = require('comlink/dist/umd/node-adapter.js');

export type Remote<T> = ComlinkTypes.Remote<T>;

/** Turns a worker_threads port or Worker into a comlink endpoint. */
export function endpoint(port: MessagePort | Worker): ComlinkTypes.Endpoint {
  return nodeAdapter(port);
}
