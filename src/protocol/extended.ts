// An object's own properties and some more, as a new object, for the paths
// every call takes. Not written `{ ...base, key }`: Node 20's V8 gives each
// object made that way by optimised code a hidden class of its own, so every
// later read of it misses its inline cache and each one costs a new map.
// Object.assign onto an empty literal keeps one hidden class per shape. Pure.

const PROTO = '__proto__';

export function extended<A extends object, B extends object>(base: A, extra: B): Omit<A, keyof B> & B {
  // Parsed JSON may carry an own "__proto__" key: Object.assign would set the prototype with it, a spread copies it as data.
  if (Object.hasOwn(base, PROTO) || Object.hasOwn(extra, PROTO)) return { ...base, ...extra };
  return Object.assign({}, base, extra);
}
