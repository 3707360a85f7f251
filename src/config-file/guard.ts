// The servers API while a config file owns some servers: changes to those are
// refused (SERVER_MANAGED_BY_FILE, naming the file), since the next edit of the
// file would silently undo them; their views say which file declares them and
// show arguments written with ${VAR} as written, never the value read.
import type { AuditActor } from '../protocol/db.js';
import { CofferError } from '../protocol/errors.js';
import type { Registry, ServerView } from '../registry/registry.js';
import type { ConfigFileSync } from './sync.js';

/** What the guard asks of the file: who owns a server, and its secret fields as written. */
export type FileOwnership = Pick<ConfigFileSync, 'ownerOf' | 'declared'>;

export type ServersApi = Pick<Registry, 'list' | 'get' | 'add' | 'update' | 'setEnabled' | 'remove'>;

export type ManagedView = ServerView & { managed_by?: string };

export function managedByFile(server: string, path: string): CofferError {
  return new CofferError(
    'SERVER_MANAGED_BY_FILE',
    `server '${server}' is declared in the config file ${path}: change it there (coffer applies the file when it changes), or take it out of the file to manage it here`,
    { server, file: path },
  );
}

function fileView(view: ServerView, sync: FileOwnership): ManagedView {
  const path = sync.ownerOf(view.name);
  if (path === null) return view;
  const declared = sync.declared(view.name);
  const transport = view.transport;
  if (transport.type !== 'stdio' || !declared) return { ...view, managed_by: path };
  const args = transport.args.map((arg, index) => declared.args[index] ?? arg);
  return { ...view, transport: { ...transport, args }, managed_by: path };
}

interface Writes<T> {
  add(input: unknown, actor: AuditActor): Promise<T>;
  update(name: string, patch: unknown, actor: AuditActor): Promise<T>;
  remove(name: string, actor: AuditActor): Promise<void>;
}

/** add, update and remove of `api`, each refused first when the file owns the name. */
export function ownedWritesRefused<T>(api: Writes<T>, refuseOwned: (name: string) => void): Writes<T> {
  return {
    add: async (input, actor) => {
      const name = (input as { name?: unknown } | null)?.name;
      if (typeof name === 'string') refuseOwned(name);
      return api.add(input, actor);
    },
    update: async (name, patch, actor) => {
      refuseOwned(name);
      return api.update(name, patch, actor);
    },
    remove: async (name, actor) => {
      refuseOwned(name);
      return api.remove(name, actor);
    },
  };
}

export function fileGuardedServers(registry: Registry, sync: FileOwnership): ServersApi {
  const refuseOwned = (name: string): void => {
    const path = sync.ownerOf(name);
    if (path !== null) throw managedByFile(name, path);
  };
  return {
    list: async () => (await registry.list()).map((view) => fileView(view, sync)),
    get: async (name) => fileView(await registry.get(name), sync),
    ...ownedWritesRefused(registry, refuseOwned),
    setEnabled: async (name, enabled, actor) => {
      refuseOwned(name);
      return registry.setEnabled(name, enabled, actor);
    },
  };
}
