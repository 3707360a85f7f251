// What applying a config file changes (pure): the servers (or toolsets) it
// adds, the ones whose config differs (updated; the registry restarts only
// those whose connection settings changed), the ones it no longer declares
// (removed), and prefixes it would take from servers it does not own.
import { prefixOf, type ServerConfig } from '../protocol/server-config.js';

export interface Plan<T extends Named = ServerConfig> {
  add: T[];
  update: T[];
  remove: string[];
  /** Registered through the API and now declared in the file: updated, and owned by the file from now on. */
  adopt: string[];
}

/** JSON with keys sorted: two configs that differ only in key order are the same config. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1))) : item,
  );
}

interface Named {
  name: string;
}

/** Servers or toolsets alike: `running` as comparable to `desired` (the same fields). */
export function planChanges<T extends Named>(desired: readonly T[], running: readonly T[], owned: ReadonlySet<string>): Plan<T> {
  const byName = new Map(running.map((config) => [config.name, config]));
  const wanted = new Set(desired.map((config) => config.name));
  const plan: Plan<T> = { add: [], update: [], remove: [], adopt: [] };
  for (const config of desired) {
    const current = byName.get(config.name);
    if (current === undefined) plan.add.push(config);
    else if (canonical(current) !== canonical(config)) plan.update.push(config);
    if (current !== undefined && !owned.has(config.name)) plan.adopt.push(config.name);
  }
  plan.remove = [...owned].filter((name) => !wanted.has(name) && byName.has(name)).sort();
  return plan;
}

/** Entries of the file whose prefix a server it does not own already has: [index in the file, message]. */
export function prefixClashes(desired: readonly ServerConfig[], running: readonly ServerConfig[], owned: ReadonlySet<string>): [number, string][] {
  const wanted = new Set(desired.map((config) => config.name));
  const others = new Map(running.filter((config) => !owned.has(config.name) && !wanted.has(config.name)).map((config) => [prefixOf(config), config.name]));
  return desired.flatMap((config, index): [number, string][] => {
    const other = others.get(prefixOf(config));
    return other === undefined ? [] : [[index, `"${prefixOf(config)}" is already the prefix of server '${other}' (registered through the API); choose another namespace or remove that server`]];
  });
}
