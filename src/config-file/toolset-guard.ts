// The toolsets API while a config file declares some toolsets: changes to those
// are refused (TOOLSET_MANAGED_BY_FILE, naming the file), since the next edit
// of the file would silently undo them. Binding clients to them stays open:
// a binding is the client's, not the toolset's.
import type { ToolsetsApi } from '../api/routes/toolsets.js';
import { CofferError } from '../protocol/errors.js';
import { ownedWritesRefused } from './guard.js';
import type { ConfigFileSync } from './sync.js';

export type ToolsetOwnership = Pick<ConfigFileSync, 'toolsetOwner'>;

export function toolsetManagedByFile(toolset: string, path: string): CofferError {
  return new CofferError(
    'TOOLSET_MANAGED_BY_FILE',
    `toolset '${toolset}' is declared in the config file ${path}: change it there (coffer applies the file when it changes), or take it out of the file to manage it here`,
    { toolset, file: path },
  );
}

export function fileGuardedToolsets(toolsets: ToolsetsApi, sync: ToolsetOwnership): ToolsetsApi {
  const refuseOwned = (name: string): void => {
    const path = sync.toolsetOwner(name);
    if (path !== null) throw toolsetManagedByFile(name, path);
  };
  return {
    list: () => toolsets.list(),
    get: (name) => toolsets.get(name),
    bind: (client, toolset, actor) => toolsets.bind(client, toolset, actor),
    ...ownedWritesRefused(toolsets, refuseOwned),
  };
}
