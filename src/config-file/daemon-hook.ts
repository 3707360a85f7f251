// The config file's part in the daemon's start: read before anything opens (an
// invalid file stops the start with its line and column), applied between
// reading the registry and starting actors (a server the file removed or
// changed never starts in its old form), then watched.
import { resolve } from 'node:path';
import type { Logger } from '../log.js';
import type { Registry } from '../registry/registry.js';
import { loadConfigFile, type LoadedConfig } from './load.js';
import { clearOwnership, readOwnership } from './ownership.js';
import { ConfigFileSync, type ConfigSyncDeps } from './sync.js';

/** The file as given to --config, read and validated; null without one. */
export function readStartConfig(path: string | undefined): LoadedConfig | null {
  return path === undefined ? null : loadConfigFile(resolve(path));
}

/**
 * Applies the file (or, without one, hands the servers a file used to own to the API) and
 * starts every enabled server. Answers the running sync, null without a file.
 */
export async function applyStartConfig(
  loaded: LoadedConfig | null,
  registry: Registry,
  deps: Omit<ConfigSyncDeps, 'registry'>,
): Promise<ConfigFileSync | null> {
  await registry.loadConfigs();
  let sync: ConfigFileSync | null = null;
  if (loaded) {
    sync = new ConfigFileSync(loaded, { ...deps, registry });
    await sync.start();
  } else releaseOwnership(deps.home, deps.log);
  registry.startEnabled();
  sync?.watch();
  return sync;
}

function releaseOwnership(home: string, log: Logger): void {
  const previous = readOwnership(home);
  if (!previous) return;
  clearOwnership(home);
  if (previous.servers.length > 0) {
    log.warn('started without --config: the servers the config file declared are managed through the API now', { path: previous.path, servers: previous.servers });
  }
}
