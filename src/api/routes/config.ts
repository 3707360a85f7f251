// /config routes: the config file's state (which file, the servers it owns, how
// its last change went) and the running registry and toolsets written as such a file.
import { exportConfig } from '../../config-file/export.js';
import type { ConfigFileStatus } from '../../config-file/sync.js';
import type { DeclaredSecrets } from '../../config-file/variables.js';
import type { Registry } from '../../registry/registry.js';
import type { Toolsets } from '../../toolsets/toolsets.js';
import type { Route } from '../http-api.js';

export interface ConfigFileView {
  status(): ConfigFileStatus | null;
  declared(server: string): DeclaredSecrets | undefined;
}

export function configRoutes(registry: Pick<Registry, 'all'>, toolsets: Pick<Toolsets, 'list'>, file: ConfigFileView): Route[] {
  return [
    { method: 'GET', pattern: '/config', handler: async () => ({ status: 200, body: { file: file.status() } }) },
    { method: 'GET', pattern: '/config/export', handler: async () => ({ status: 200, body: exportConfig(registry.all(), toolsets.list(), (server) => file.declared(server)) }) },
  ];
}
