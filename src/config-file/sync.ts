// Keeps the registry in step with the config file: applies it at start, then
// watches it and applies each change as a diff through the registry (the same
// path as the REST API, so audit entries, events and the state-model rules
// hold). A file that cannot be read, parsed or validated is refused whole:
// nothing changes, the refusal goes to the log and the admin WebSocket.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from '../log.js';
import type { CofferEvent, ConfigFileChanges, ConfigFileIssue } from '../protocol/events.js';
import { messageOf } from '../protocol/errors.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { ToolsetSpec } from '../protocol/toolsets.js';
import type { Registry } from '../registry/registry.js';
import type { Toolsets } from '../toolsets/toolsets.js';
import { ConfigFileError, describeIssue, parseConfigText, readConfigText, type LoadedConfig } from './load.js';
import { readOwnership, writeOwnership } from './ownership.js';
import { planChanges, prefixClashes, type Plan } from './plan.js';
import { planToolsets, toolsetProblems } from './toolset-plan.js';
import type { DeclaredSecrets } from './variables.js';

export interface ConfigSyncDeps {
  home: string;
  registry: Pick<Registry, 'all' | 'add' | 'update' | 'remove' | 'namespaceIssue'>;
  /** Applied after the servers of the same change, through the same service as the REST API. */
  toolsets: Pick<Toolsets, 'list' | 'add' | 'update' | 'remove'>;
  /** The clients and the toolset each is bound to: a file may not remove a toolset in use. */
  clients(): Promise<{ name: string; toolset: string | null }[]>;
  log: Logger;
  publish(event: CofferEvent): void;
  /** One audit entry per applied change of the file (each server's own entries come from the registry). */
  audit(payload: Record<string, unknown>): Promise<void>;
  env?: NodeJS.ProcessEnv;
  /** Quiet time after the last change event before the file is read (editors write in several steps). */
  debounceMs?: number;
}

export interface ConfigFileStatus {
  path: string;
  servers: string[];
  toolsets: string[];
  last: { status: 'applied' | 'refused' | 'failed'; at: string; errors: ConfigFileIssue[]; message: string | null };
}

type Outcome = Pick<Extract<CofferEvent, { type: 'config_file' }>, 'status' | 'added' | 'updated' | 'removed' | 'toolsets' | 'errors' | 'message'>;

const noChanges = (): ConfigFileChanges => ({ added: [], updated: [], removed: [] });

const DEFAULT_DEBOUNCE_MS = 150;

export class ConfigFileSync {
  private owned: Set<string>;
  private ownedToolsets: Set<string>;
  private loaded: LoadedConfig;
  /** The text last read (null after a read failed: the next text read is handled, even one equal to the applied one). */
  private lastText: string | null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** One apply at a time, in the order the changes were seen. */
  private queue: Promise<void> = Promise.resolve();
  private last: ConfigFileStatus['last'];

  /** `loaded`: the file as read at start (the daemon refuses to start when it is invalid). */
  constructor(
    loaded: LoadedConfig,
    private readonly deps: ConfigSyncDeps,
  ) {
    this.loaded = loaded;
    this.lastText = loaded.text;
    const ownership = readOwnership(deps.home);
    this.owned = new Set(ownership?.servers ?? []);
    this.ownedToolsets = new Set(ownership?.toolsets ?? []);
    this.last = { status: 'applied', at: new Date().toISOString(), errors: [], message: null };
  }

  get path(): string {
    return this.loaded.path;
  }

  /** The file's path when it declares this server, else null. */
  ownerOf(name: string): string | null {
    return this.owned.has(name) ? this.loaded.path : null;
  }

  /** The file's path when it declares this toolset, else null. */
  toolsetOwner(name: string): string | null {
    return this.ownedToolsets.has(name) ? this.loaded.path : null;
  }

  declared(name: string): DeclaredSecrets | undefined {
    return this.owned.has(name) ? this.loaded.declared.get(name) : undefined;
  }

  status(): ConfigFileStatus {
    return { path: this.loaded.path, servers: [...this.owned].sort(), toolsets: [...this.ownedToolsets].sort(), last: this.last };
  }

  /** Applies the file read at start; throws ConfigFileError when it cannot be (the daemon does not start). */
  async start(): Promise<void> {
    const outcome = await this.apply(this.loaded);
    if (outcome.status === 'refused') throw new ConfigFileError(this.loaded.path, outcome.errors);
    if (outcome.status === 'failed') throw new Error(`config file ${this.loaded.path} could not be applied: ${outcome.message}`);
  }

  /**
   * Watches the file's folder, not the file: editors and `kubectl`-style symlink swaps replace
   * the file, which would end a watch on the old one.
   */
  watch(): void {
    const name = basename(this.loaded.path);
    this.watcher = watch(dirname(this.loaded.path), (_event, changed) => {
      if (changed !== null && changed !== name && !changed.startsWith('..')) return;
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.timer = null;
        // A failure that is no refusal (the disk, the database) is logged, and the next change is still read.
        this.queue = this.queue.then(() => this.reload()).catch((error: unknown) => this.deps.log.error('config file change not applied', { path: this.loaded.path, error: String(error) }));
      }, this.deps.debounceMs ?? DEFAULT_DEBOUNCE_MS);
    });
    this.watcher.on('error', (error) => this.deps.log.error('config file watch failed: changes to the file are no longer applied', { path: this.loaded.path, error: error.message }));
  }

  async close(): Promise<void> {
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
    await this.queue;
  }

  /** The file's text when it differs from the text last read, else null. */
  private readChanged(): string | null {
    const previous = this.lastText;
    // Nothing counts as read until it is: after a failure, the next text read is handled, even the one applied.
    this.lastText = null;
    const text = readConfigText(this.loaded.path);
    this.lastText = text;
    return text === previous ? null : text;
  }

  private async reload(): Promise<void> {
    let loaded: LoadedConfig;
    try {
      const text = this.readChanged();
      if (text === null) return;
      loaded = parseConfigText(this.loaded.path, text, this.deps.env ?? process.env);
    } catch (error) {
      if (!(error instanceof ConfigFileError)) throw error;
      this.report({ status: 'refused', ...noChanges(), toolsets: noChanges(), errors: error.errors, message: error.message });
      return;
    }
    const outcome = await this.apply(loaded);
    if (outcome.status === 'applied') this.loaded = loaded;
    // Refused against the running state (a bound client, a taken prefix) or stopped part-way (the database):
    // saving the same text again retries once that state changed.
    else this.lastText = this.loaded.text;
  }

  private async apply(loaded: LoadedConfig): Promise<Outcome> {
    const { registry, toolsets } = this.deps;
    const running = registry.all();
    const plan = planChanges(loaded.servers, running, this.owned);
    const toolsetPlan = planToolsets(loaded.toolsets, toolsets.list(), this.ownedToolsets);
    const clashes = prefixClashes(loaded.servers, running, this.owned).map(([index, message]) => ({
      path: ['servers', index, loaded.servers[index]!.namespace === '' ? 'name' : 'namespace'],
      message,
    }));
    // Checked before anything changes: the registry would refuse them only after the removals.
    const namespaces = [...plan.add, ...plan.update].flatMap((config) => {
      const issue = registry.namespaceIssue(config);
      return issue ? [{ path: ['servers', loaded.servers.indexOf(config), issue.field], message: issue.message }] : [];
    });
    const check = { toolsets: loaded.toolsets, servers: loaded.servers, running, ownedServers: this.owned, remove: toolsetPlan.remove, clients: await this.deps.clients() };
    const problems = [...clashes, ...namespaces, ...toolsetProblems(check)];
    if (problems.length > 0) {
      const errors = problems.map(({ path, message }) => loaded.issueAt(path, message));
      return this.report({ status: 'refused', ...noChanges(), toolsets: noChanges(), errors, message: new ConfigFileError(loaded.path, errors).message });
    }
    const done: Outcome = { status: 'applied', ...noChanges(), toolsets: noChanges(), errors: [], message: null };
    try {
      // Removals first: they free the names and prefixes that additions may take.
      for (const name of plan.remove) {
        await registry.remove(name, 'system');
        this.owned.delete(name);
        done.removed.push(name);
      }
      for (const config of plan.update) {
        await registry.update(config.name, statingEveryField(config), 'system');
        this.owned.add(config.name);
        done.updated.push(config.name);
      }
      for (const config of plan.add) {
        await registry.add(config, 'system');
        this.owned.add(config.name);
        done.added.push(config.name);
      }
      await this.applyToolsets(toolsetPlan, done.toolsets);
    } catch (error) {
      done.status = 'failed';
      done.message = `stopped part-way (${messageOf(error)}); applied so far: ${describeChanges(done)}`;
    }
    for (const name of plan.adopt) {
      this.owned.add(name);
      this.deps.log.warn('server registered through the API is now declared in the config file: the file owns it', { server: name, path: loaded.path });
    }
    for (const name of toolsetPlan.adopt) this.ownedToolsets.add(name);
    if (done.status === 'applied') {
      this.owned = new Set(loaded.servers.map((config) => config.name));
      this.ownedToolsets = new Set(loaded.toolsets.map((toolset) => toolset.name));
    }
    writeOwnership(this.deps.home, { path: loaded.path, servers: [...this.owned].sort(), toolsets: [...this.ownedToolsets].sort(), applied_at: new Date().toISOString() });
    if (changed(done) || changed(done.toolsets)) {
      await this.deps.audit({ path: loaded.path, added: done.added, updated: done.updated, removed: done.removed, toolsets: done.toolsets });
    }
    return this.report(done);
  }

  /** Each step is its own `toolset` event and audit entry (the service's own); `done` lists the steps taken. */
  private async applyToolsets(plan: Plan<ToolsetSpec>, done: ConfigFileChanges): Promise<void> {
    const { toolsets } = this.deps;
    for (const name of plan.remove) {
      await toolsets.remove(name, 'system');
      this.ownedToolsets.delete(name);
      done.removed.push(name);
    }
    // `mode` and `pinned` are given even when absent, so what is taken out of the file goes back to the default.
    for (const spec of plan.update) {
      await toolsets.update(spec.name, { description: spec.description, servers: spec.servers, mode: spec.mode, pinned: spec.pinned ?? [] }, 'system');
      this.ownedToolsets.add(spec.name);
      done.updated.push(spec.name);
    }
    for (const spec of plan.add) {
      await toolsets.add(spec, 'system');
      this.ownedToolsets.add(spec.name);
      done.added.push(spec.name);
    }
  }

  private report(outcome: Outcome): Outcome {
    const at = new Date().toISOString();
    this.last = { status: outcome.status, at, errors: outcome.errors, message: outcome.message };
    const fields = { path: this.loaded.path, added: outcome.added, updated: outcome.updated, removed: outcome.removed, toolsets: outcome.toolsets };
    if (outcome.status === 'applied') this.deps.log.info('config file applied', fields);
    else if (outcome.status === 'refused') this.deps.log.warn('config file refused; the running servers are unchanged', { path: this.loaded.path, errors: outcome.errors.map(describeIssue) });
    else this.deps.log.error('config file applied only in part', { ...fields, error: outcome.message });
    this.deps.publish({ type: 'config_file', path: this.loaded.path, ...outcome, at });
    return outcome;
  }
}

/**
 * The file's entry as a patch that states every field: one left out of the file (the transport's
 * optional oauth block) goes from the server, where a patch that leaves it out would keep it.
 */
function statingEveryField(config: ServerConfig): ServerConfig {
  return config.transport.type === 'stdio' ? config : { ...config, transport: { oauth: undefined, ...config.transport } };
}

const changed = ({ added, updated, removed }: ConfigFileChanges): boolean => added.length + updated.length + removed.length > 0;

function describeChanges(outcome: Outcome): string {
  const parts = [
    ['added', outcome.added],
    ['updated', outcome.updated],
    ['removed', outcome.removed],
    ['added toolset(s)', outcome.toolsets.added],
    ['updated toolset(s)', outcome.toolsets.updated],
    ['removed toolset(s)', outcome.toolsets.removed],
  ] as const;
  return parts.filter(([, names]) => names.length > 0).map(([what, names]) => `${what} ${names.join(', ')}`).join('; ') || 'nothing';
}
