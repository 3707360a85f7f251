// Worker entry of an actor: runs the actor's scripts (scripts/build-actor.mjs:
// the bundle and its chunks, each a CommonJS-style function body), with no ES
// module loader in the worker, each compiled with its V8 code cache
// (code-cache.cts), which Node 20 takes only for a script. It links their
// require()s itself: a chunk is loaded once, whether required at start or, as
// import() was, later.
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';
import type { ActorInit } from '../../src/protocol/actor.js';
import { CodeCache, ScriptStore } from './code-cache.cjs';
import { onStarted } from './started.cjs';

type Module = { exports: object };
type ModuleFunction = (exports: object, require: (specifier: string) => unknown, module: Module, importMetaUrl: string) => void;

const SCRIPTS = join(__dirname, 'script');
const init = workerData as ActorInit;
// The daemon hands every worker the scripts it read once; a worker started without them (a test's) reads its own, with no cache.
const set = init.scripts ?? new ScriptStore(SCRIPTS, undefined).current();
if (!set) throw new Error(`the actor's scripts in ${SCRIPTS} cannot be read: run npm run build`);
const cache = new CodeCache(set);
const modules = new Map<string, Module>();

function load(file: string): object {
  const known = modules.get(file);
  if (known) return known.exports;
  const module: Module = { exports: {} };
  modules.set(file, module);
  const run = cache.compile(file).runInThisContext() as ModuleFunction;
  const linked = (specifier: string): unknown => (specifier.startsWith('.') ? load(resolve(dirname(file), specifier)) : require(specifier));
  run.call(undefined, module.exports, linked, module, pathToFileURL(file).href);
  return module.exports;
}

// After the ready event has gone out.
onStarted(() => setImmediate(() => cache.save()));
load(join(SCRIPTS, 'actor.js'));
