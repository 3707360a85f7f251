// The router's list deadline counts from the client's list, not from when each
// upstream's request went out: posting to many actors (or a GC pause while
// doing so) must not push the last upstreams' deadlines later; a call that
// waits for a list is weighed after it. Fakes for the actors, no threads.
import t from 'tap';
import type { CapabilityGate } from '../src/router/gate.js';
import { Router, type ServerDirectory } from '../src/router/router.js';
import { Calls } from '../src/router/calls.js';
import { Cancel } from '../src/protocol/cancel.js';
import type { ListAnswer, Upstream, UpstreamDirectory } from '../src/upstreams/upstream.js';
import { serverConfig } from './fixtures/fixture-servers.js';

const DEADLINE_MS = 500;
/** How long the first upstream holds the main thread while its request is posted. */
const POSTING_MS = 500;

function fakeUpstream(name: string, list: () => Promise<ListAnswer>): Upstream {
  return {
    name,
    config: serverConfig(name, { type: 'stdio', command: 'none', args: [], env: {}, cwd: null }, { list_deadline_ms: DEADLINE_MS }),
    list,
    forward: () => Promise.reject(new Error('not used')),
    cancel: () => undefined,
    command: () => undefined,
    closeSession: () => undefined,
    lastStatus: { server: name, state: 'ready', since: Date.now(), attempts: 0, lastError: null, serverInfo: null, protocolVersion: null, era: null, pid: null },
  };
}

t.test('a list answers at the deadline counted from its start, even when posting to the upstreams took long', async (t) => {
  const slowToPost = fakeUpstream('slow', () => {
    const until = performance.now() + POSTING_MS;
    while (performance.now() < until);
    return Promise.resolve({ ok: true, state: 'live', items: [{ name: 'echo', inputSchema: { type: 'object' } }], version: 1, fetchedAt: Date.now() });
  });
  const hung = fakeUpstream('hung', () => new Promise<ListAnswer>(() => undefined));
  const upstreams: UpstreamDirectory = { active: () => [slowToPost, hung], get: (name) => [slowToPost, hung].find((u) => u.name === name) };
  const servers: ServerDirectory = { config: (name) => upstreams.get(name)?.config, all: () => [slowToPost.config, hung.config] };
  const gate = { version: 0, isEnabled: () => true, ownWords: () => undefined, observe: async () => undefined } as unknown as CapabilityGate;
  const router = new Router(upstreams, gate, servers, 60_000);

  const started = performance.now();
  const items = await router.list('tools');
  const elapsed = performance.now() - started;
  t.same(items.map((item) => item.name), ['slow__echo'], 'the healthy upstream is listed, the hung one left out');
  // Counted from each request's posting, the hung upstream's deadline would end at POSTING_MS + DEADLINE_MS;
  // the bound sits well between that and the right answer, as timers fire late on a loaded machine.
  t.ok(elapsed < POSTING_MS + DEADLINE_MS - 150, `answered after ${Math.round(elapsed)} ms (deadline ${DEADLINE_MS} ms from the start)`);
  t.same(router.degradedServers(), ['hung']);
});

t.test("a call whose name no merged list routes is weighed against its switch once its upstream's list has answered, not before", async (t) => {
  let answerList: (answer: ListAnswer) => void = () => undefined;
  const forwarded: string[] = [];
  const upstream: Upstream = {
    ...fakeUpstream('a', () => new Promise<ListAnswer>((resolve) => (answerList = resolve))),
    forward: async (request) => (forwarded.push(String(request.params.name)), { ok: true, result: { content: [] } }),
  };
  const upstreams: UpstreamDirectory = { active: () => [upstream], get: (name) => (name === 'a' ? upstream : undefined) };
  const servers: ServerDirectory = { config: (name) => upstreams.get(name)?.config, all: () => [upstream.config] };
  let echoOn = true;
  const gate = { version: 0, isEnabled: () => echoOn, ownWords: () => undefined, keyOfOwnName: () => undefined, observe: async () => undefined } as unknown as CapabilityGate;
  const router = new Router(upstreams, gate, servers, 60_000);
  const calls = new Calls(upstreams, gate, servers, router.namespaces, router.directory, () => undefined, () => {
    throw new Error('not used');
  });

  // No list was merged yet: the call asks a's own list whether it names echo, and waits for it.
  const call = calls.forward('tools', 'tools/call', { name: 'a__echo', arguments: {} }, { sessionId: 's', requestId: 1, capabilities: {}, signal: new Cancel() });
  await new Promise((resolve) => setImmediate(resolve));
  // The user switches echo off meanwhile.
  echoOn = false;
  answerList({ ok: true, state: 'live', items: [{ name: 'echo', inputSchema: { type: 'object' } }], version: 1, fetchedAt: Date.now() });
  await t.rejects(call, { code: -32000, data: { code: 'TOOL_DISABLED' } }, 'the call is refused as the switch now says');
  t.same(forwarded, [], 'and never reaches the upstream');
});

t.test('a list gathered before an upstream changed, answered after a later one, does not put its older routes back for calls', async (t) => {
  // Two unprefixed servers: `x` passes from u1 to u2 while the first list is still gathering.
  const held: Array<(answer: ListAnswer) => void> = [];
  const forwardedTo: string[] = [];
  const upstream = (name: string): Upstream => ({
    ...fakeUpstream(name, () => new Promise<ListAnswer>((resolve) => void held.push(resolve))),
    config: { ...fakeUpstream(name, () => Promise.reject(new Error('not used'))).config, namespace: '' },
    forward: async () => (forwardedTo.push(name), { ok: true, result: { content: [] } }),
  });
  const both = [upstream('u1'), upstream('u2')];
  const upstreams: UpstreamDirectory = { active: () => both, get: (name) => both.find((one) => one.name === name) };
  const servers: ServerDirectory = { config: (name) => upstreams.get(name)?.config, all: () => both.map((one) => one.config) };
  const gate = { version: 0, isEnabled: () => true, ownWords: () => undefined, keyOfOwnName: () => undefined, observe: async () => undefined } as unknown as CapabilityGate;
  const router = new Router(upstreams, gate, servers, 60_000);
  const calls = new Calls(upstreams, gate, servers, router.namespaces, router.directory, () => undefined, () => {
    throw new Error('not used');
  });
  const live = (items: Record<string, unknown>[], version: number): ListAnswer => ({ ok: true, state: 'live', items, version, fetchedAt: Date.now() });
  const x = { name: 'x', inputSchema: { type: 'object' } };

  const before = router.list('tools');
  const [u1Before, u2Before] = held.splice(0);
  router.changed('u1', 'tools');
  router.changed('u2', 'tools');
  const after = router.list('tools');
  const [u1After, u2After] = held.splice(0);
  u1After!(live([], 2));
  u2After!(live([x], 2));
  t.same((await after).map((item) => item.name), ['x'], 'the later list has x, which is u2\'s now');
  u1Before!(live([x], 1));
  u2Before!(live([], 1));
  await before;

  await calls.forward('tools', 'tools/call', { name: 'x', arguments: {} }, { sessionId: 's', requestId: 1, capabilities: {}, signal: new Cancel() });
  t.same(forwardedTo, ['u2'], 'a call of x goes where the latest list said');
  t.same(router.routes('tools')?.get('x'), { server: 'u2', original: 'x' });
});

t.test('a server removed or disabled while its list is out is not left degraded by that list failing as its actor stops', async (t) => {
  let answerList: (answer: ListAnswer) => void = () => undefined;
  const gone = fakeUpstream('gone', () => new Promise<ListAnswer>((resolve) => (answerList = resolve)));
  let active = [gone];
  const upstreams: UpstreamDirectory = { active: () => active, get: (name) => active.find((one) => one.name === name) };
  const servers: ServerDirectory = { config: (name) => upstreams.get(name)?.config, all: () => active.map((one) => one.config) };
  const gate = { version: 0, isEnabled: () => true, ownWords: () => undefined, observe: async () => undefined } as unknown as CapabilityGate;
  const router = new Router(upstreams, gate, servers, 60_000);
  const degraded: string[] = [];
  router.on('degraded', (server) => void degraded.push(server));

  const listing = router.list('tools');
  active = [];
  router.forgetServer('gone');
  answerList({ ok: false, error: { code: 'UPSTREAM_UNAVAILABLE', message: 'actor stopped' } });
  t.same(await listing, [], 'the list answers without it');
  t.same(router.degradedServers(), [], 'it is not counted degraded');
  t.same(degraded, [], 'nor announced so');
});
