// A real router over fake unprefixed upstreams whose lists wait until the test
// answers them: how a race between two lists (one gathered before an upstream
// changed, one after) is staged without threads.
import type { CapabilityGate } from '../../src/router/gate.js';
import { Router, type ServerDirectory } from '../../src/router/router.js';
import type { ListAnswer, Upstream, UpstreamDirectory } from '../../src/upstreams/upstream.js';
import { serverConfig } from '../fixtures/fixture-servers.js';

export interface HeldLists {
  router: Router;
  /** Each list asked of an upstream and not answered yet, in the order asked. */
  held: Array<{ server: string; answer: (answer: ListAnswer) => void }>;
}

export function heldLists(names: readonly string[]): HeldLists {
  const held: HeldLists['held'] = [];
  const upstream = (name: string): Upstream => ({
    name,
    config: { ...serverConfig(name, { type: 'stdio', command: 'none', args: [], env: {}, cwd: null }), namespace: '' },
    list: () => new Promise<ListAnswer>((resolve) => void held.push({ server: name, answer: resolve })),
    forward: () => Promise.reject(new Error('not used')),
    cancel: () => undefined,
    command: () => undefined,
    closeSession: () => undefined,
    lastStatus: { server: name, state: 'ready', since: Date.now(), attempts: 0, lastError: null, serverInfo: null, protocolVersion: null, era: null, pid: null },
  });
  const all = names.map(upstream);
  const upstreams: UpstreamDirectory = { active: () => all, get: (name) => all.find((one) => one.name === name) };
  const servers: ServerDirectory = { config: (name) => upstreams.get(name)?.config, all: () => all.map((one) => one.config) };
  const gate = { version: 0, isEnabled: () => true, ownWords: () => undefined, observe: async () => undefined } as unknown as CapabilityGate;
  return { router: new Router(upstreams, gate, servers, 60_000), held };
}
