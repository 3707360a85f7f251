// The main thread's one source of upstream lists: every live answer is
// reconciled here (R4), a copy is kept for warm lists, and changed() is the
// one way a copy goes (R3) — including a copy of an answer that was still in
// flight when its list changed. Fake actors, no threads.
import t from 'tap';
import type { ListKind } from '../src/protocol/capabilities.js';
import { UpstreamLists } from '../src/router/upstream-lists.js';
import type { ListAnswer, Upstream } from '../src/upstreams/upstream.js';
import { serverConfig } from './fixtures/fixture-servers.js';

const TTL_MS = 60_000;

function live(version: number, names: string[]): ListAnswer {
  return { ok: true, state: 'live', items: names.map((name) => ({ name })), version, fetchedAt: Date.now() };
}

/** An actor whose answers the test releases one by one; records every list it was asked for. */
function fakeUpstream(name: string) {
  const asked: Array<{ kind: ListKind; fresh: boolean; answer: (value: ListAnswer) => void }> = [];
  const upstream = {
    name,
    config: serverConfig(name, { type: 'stdio', command: 'none', args: [], env: {}, cwd: null }),
    list: (kind: ListKind, fresh: boolean) => new Promise<ListAnswer>((answer) => asked.push({ kind, fresh, answer })),
  } as unknown as Upstream;
  return { upstream, asked };
}

function recordingGate() {
  const observed: Array<[string, ListKind, number]> = [];
  return { observed, gate: { observe: async (upstream: Upstream, kind: ListKind, _items: unknown[], version: number) => void observed.push([upstream.name, kind, version]) } };
}

t.test('a live answer is reconciled and kept; an unsupported kind is kept empty and not reconciled', async (t) => {
  const { gate, observed } = recordingGate();
  const lists = new UpstreamLists(gate, TTL_MS);
  const { upstream, asked } = fakeUpstream('a');
  const tools = lists.fetch(upstream, 'tools', false);
  asked[0]!.answer(live(3, ['echo']));
  await (await tools).reconciled;
  t.same(observed, [['a', 'tools', 3]], 'reconciled with its version');
  t.same(lists.cached('a', 'tools')?.items, [{ name: 'echo' }]);
  const prompts = lists.fetch(upstream, 'prompts', false);
  asked[1]!.answer({ ok: true, state: 'unsupported', version: 1, fetchedAt: Date.now() });
  await prompts;
  t.same(lists.cached('a', 'prompts')?.items, []);
  t.equal(observed.length, 1, 'nothing to reconcile for an unsupported kind');
});

t.test('changed() drops the copy, and a resources change drops the templates copy with it', async (t) => {
  const lists = new UpstreamLists(recordingGate().gate, TTL_MS);
  const { upstream, asked } = fakeUpstream('a');
  for (const kind of ['tools', 'resources', 'resourceTemplates'] as const) {
    const fetched = lists.fetch(upstream, kind, false);
    asked.at(-1)!.answer(live(1, []));
    await fetched;
  }
  lists.changed('a', 'resources');
  t.equal(lists.cached('a', 'resources'), undefined);
  t.equal(lists.cached('a', 'resourceTemplates'), undefined);
  t.ok(lists.cached('a', 'tools'), 'another kind keeps its copy');
  lists.changed('a');
  t.equal(lists.cached('a', 'tools'), undefined, 'without a kind, every copy of the server goes');
});

t.test('an answer that was in flight when its list changed is not kept', async (t) => {
  const lists = new UpstreamLists(recordingGate().gate, TTL_MS);
  const { upstream, asked } = fakeUpstream('a');
  const stale = lists.fetch(upstream, 'tools', false);
  lists.changed('a', 'tools');
  const old = live(1, ['old']);
  asked[0]!.answer(old);
  t.equal((await stale).answer, old, 'the caller still gets its answer');
  t.equal(lists.cached('a', 'tools'), undefined, 'but the next list asks the actor again');
});

t.test('fetch(fresh) asks the actor for a fresh list and replaces the copy', async (t) => {
  const lists = new UpstreamLists(recordingGate().gate, TTL_MS);
  const { upstream, asked } = fakeUpstream('a');
  const first = lists.fetch(upstream, 'tools', false);
  asked[0]!.answer(live(1, ['old']));
  await first;
  const fresh = lists.fetch(upstream, 'tools', true);
  t.equal(lists.cached('a', 'tools'), undefined, 'the old copy is gone while the refresh runs');
  t.equal(asked[1]!.fresh, true);
  asked[1]!.answer(live(2, ['new']));
  await fresh;
  t.same(lists.cached('a', 'tools')?.version, 2);
});
