// What applying a config file does to toolsets (pure): the diff against the
// running ones, and what refuses the file whole before anything changes — a
// rule naming a server that will not exist, or removing a toolset a client is
// bound to (its sessions would lose their whole surface without anyone asking).
import type { ServerConfig } from '../protocol/server-config.js';
import { toolsetOptions, type ToolsetRecord, type ToolsetSpec } from '../protocol/toolsets.js';
import { planChanges, type Plan } from './plan.js';

export interface ToolsetFileIssue {
  path: (string | number)[];
  message: string;
}

/** The user's part of a stored toolset, comparable with a file entry. */
const specOf = ({ name, description, servers, mode, pinned }: ToolsetRecord): ToolsetSpec => ({ name, description, servers, ...toolsetOptions({ mode, pinned }) });

export function planToolsets(desired: readonly ToolsetSpec[], running: readonly ToolsetRecord[], owned: ReadonlySet<string>): Plan<ToolsetSpec> {
  return planChanges(desired, running.map(specOf), owned);
}

export interface ToolsetCheck {
  toolsets: readonly ToolsetSpec[];
  servers: readonly ServerConfig[];
  /** The registry now, and which of its servers the file owns (those not in the file go away). */
  running: readonly ServerConfig[];
  ownedServers: ReadonlySet<string>;
  remove: readonly string[];
  clients: readonly { name: string; toolset: string | null }[];
}

export function toolsetProblems({ toolsets, servers, running, ownedServers, remove, clients }: ToolsetCheck): ToolsetFileIssue[] {
  const known = new Set([...servers.map((config) => config.name), ...running.filter((config) => !ownedServers.has(config.name)).map((config) => config.name)]);
  const unknown = toolsets.flatMap((toolset, index) =>
    toolset.servers.flatMap((rule, at) =>
      known.has(rule.server) ? [] : [{ path: ['toolsets', index, 'servers', at, 'server'], message: `no server named "${rule.server}" is declared in this file or registered through the API` }],
    ),
  );
  const bound = remove.flatMap((name) => {
    const names = clients.filter((client) => client.toolset === name).map((client) => client.name);
    const message = `toolset "${name}" is no longer declared, but client(s) ${names.join(', ')} are bound to it: bind them elsewhere first ('coffer client bind NAME --toolset OTHER' or '--none'), or keep it in the file`;
    return names.length === 0 ? [] : [{ path: ['toolsets'], message }];
  });
  return [...unknown, ...bound];
}
