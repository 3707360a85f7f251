// The actor tells its worker entry (boot.cts) that its start-up path has run,
// for the code cache to be written then. The actor's scripts and the entry share
// no module instance, so the entry leaves its hook on the global object.
const HOOK = Symbol.for('coffer.actor.started');

type Global = Record<symbol, (() => void) | undefined>;

/** What the actor's first started() calls. */
export function onStarted(hook: () => void): void {
  (globalThis as unknown as Global)[HOOK] = hook;
}

/** Without a worker entry that waits for it (main.js run as is), nothing happens. */
export function started(): void {
  const global = globalThis as unknown as Global;
  const hook = global[HOOK];
  global[HOOK] = undefined;
  hook?.();
}
