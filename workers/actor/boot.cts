// Worker entry of an actor: runs the actor's scripts (scripts/build-actor.mjs:
// the bundle and its chunks, each a CommonJS-style function body), with no ES
// module loader in the worker. It links their require()s itself: a chunk is
// loaded once, whether required at start or, as import() was, later.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

type Module = { exports: object };
type ModuleFunction = (exports: object, require: (specifier: string) => unknown, module: Module, importMetaUrl: string) => void;

const SCRIPTS = join(__dirname, 'script');
// As an ES module it was: strict, `this` undefined (the call below).
const code = (file: string): string => `(function (exports, require, module, __importMetaUrl) {"use strict";${readFileSync(file, 'utf8')}\n})`;

const modules = new Map<string, Module>();

function load(file: string): object {
  const known = modules.get(file);
  if (known) return known.exports;
  const module: Module = { exports: {} };
  modules.set(file, module);
  const run = new Script(code(file), { filename: file }).runInThisContext() as ModuleFunction;
  const linked = (specifier: string): unknown => (specifier.startsWith('.') ? load(resolve(dirname(file), specifier)) : require(specifier));
  run.call(undefined, module.exports, linked, module, pathToFileURL(file).href);
  return module.exports;
}

load(join(SCRIPTS, 'actor.js'));
