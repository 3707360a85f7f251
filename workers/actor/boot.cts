// Worker entry of an actor: runs the actor's scripts (scripts/build-actor.mjs:
// the bundle and its chunks, each a CommonJS-style function body), with no ES
// module loader in the worker, each compiled with its V8 code cache
// (code-cache.cts), which Node 20 takes only for a script. It links their
// require()s itself: a chunk is loaded once, whether required at start or, as
// import() was, later.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';
import type { ActorInit } from '../../src/protocol/actor.js';
import { CodeCache } from './code-cache.cjs';
import { onStarted } from './started.cjs';

type Module = { exports: object };
type ModuleFunction = (exports: object, require: (specifier: string) => unknown, module: Module, importMetaUrl: string) => void;

const SCRIPTS = join(__dirname, 'script');
// As an ES module it was: strict, `this` undefined (the call below).
const HEAD = Buffer.from('(function (exports, require, module, __importMetaUrl) {"use strict";');
const TAIL = Buffer.from('\n})');
const code = (file: string): Buffer => Buffer.concat([HEAD, readFileSync(file), TAIL]);

const cache = new CodeCache((workerData as ActorInit).codeCache);
const modules = new Map<string, Module>();

function load(file: string): object {
  const known = modules.get(file);
  if (known) return known.exports;
  const module: Module = { exports: {} };
  modules.set(file, module);
  const run = cache.compile(code(file), file).runInThisContext() as ModuleFunction;
  const linked = (specifier: string): unknown => (specifier.startsWith('.') ? load(resolve(dirname(file), specifier)) : require(specifier));
  run.call(undefined, module.exports, linked, module, pathToFileURL(file).href);
  return module.exports;
}

/** Every script of this build, as compiled: the caches of no other are stale. */
function allScripts(): Buffer[] {
  return readdirSync(SCRIPTS, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js'))
    .map((name) => code(join(SCRIPTS, name)));
}

// After the ready event has gone out.
onStarted(() => setImmediate(() => cache.save(allScripts)));
load(join(SCRIPTS, 'actor.js'));
