// Pure parts of the pass-through: whose an upstream's message is,
// subscription fan-out, log-level filtering, and the actor's relay of a
// request to the router and back (timeout, cancellation) without threads.
import * as sdk from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../src/protocol/mcp-versions.js';
import type { ActorEvent } from '../src/protocol/actor.js';
import { LogLevels } from '../src/router/log-levels.js';
import { MAX_SESSION_SUBSCRIPTIONS, Subscriptions } from '../src/router/subscriptions.js';
import { SessionFeatures } from '../src/router/session-features.js';
import type { Calls, ForwardContext } from '../src/router/calls.js';
import type { Upstream, UpstreamDirectory } from '../src/upstreams/upstream.js';
import { Cancel } from '../src/protocol/cancel.js';
import { attribute, ClientRelay } from '../workers/actor/client-relay.js';

const sessions: Record<string, string> = { f1: 'alice', f2: 'bob', f3: 'alice' };
const sessionOf = (id: string) => sessions[id];

t.test('attribution: the stream says; else the only client with calls in flight; else the connection; never a guess', async (t) => {
  t.same(attribute(null, ['f2'], sessionOf), { forwardId: 'f2', session: 'bob' }, 'the call whose stream carried it');
  t.same(attribute(null, ['f1', 'f3'], sessionOf), { forwardId: 'f3', session: 'alice' }, 'several calls of one client: the latest');
  t.equal(attribute(null, ['f1', 'f2'], sessionOf), 'ambiguous', 'calls of two clients on a shared connection');
  t.same(attribute('carol', [], sessionOf), { forwardId: null, session: 'carol' }, 'a per_session connection outside a call');
  t.same(attribute(null, [], sessionOf), { forwardId: null, session: null }, 'nobody');
  t.same(attribute(null, ['gone'], sessionOf), { forwardId: null, session: null }, 'a call that already ended does not count');
});

t.test('the relay hands a request to the router and the answer back; refuses what it cannot place; times out; follows cancellation', async (t) => {
  const events: ActorEvent[] = [];
  const relay = new ClientRelay({ server: 's', timeoutMs: 200, sessionOf, emit: (event) => void events.push(event), note: () => undefined });
  const answered = relay.request(null, 'sampling/createMessage', { messages: [] }, ['f2'], new AbortController().signal);
  const asked = events.at(-1) as Extract<ActorEvent, { type: 'client_request' }>;
  t.same(asked.target, { forwardId: 'f2', session: 'bob' });
  relay.answer(asked.ticket, { ok: true, result: { model: 'm' } });
  t.same(await answered, { result: { model: 'm' } });

  t.match(await relay.request(null, 'sampling/createMessage', {}, ['f1', 'f2'], new AbortController().signal), { error: { message: /per_session/ } });
  const before = events.length;
  t.same(await relay.request(null, 'tools/call', {}, ['f2'], new AbortController().signal), { error: { code: -32601, message: 'Method not found: coffer relays only sampling/createMessage, elicitation/create, roots/list to clients' } });
  t.equal(events.length, before, 'a method coffer does not relay never reaches the router');
  t.match(await relay.request(null, 'roots/list', {}, [], new AbortController().signal), { error: { message: /no call is in flight; roots need session_mode "per_session"/ } });

  const late = await relay.request('carol', 'elicitation/create', {}, [], new AbortController().signal);
  t.match(late, { error: { message: /did not answer elicitation\/create within 200 ms/ } });
  t.match(events.at(-1), { type: 'client_request_cancelled', reason: 'timed out' }, 'the router is told to stop waiting');

  const abort = new AbortController();
  const cancelled = relay.request('carol', 'elicitation/create', {}, [], abort.signal);
  abort.abort('the server cancelled');
  t.match(await cancelled, { error: { message: /cancelled/ } });
  t.match(events.at(-1), { type: 'client_request_cancelled', reason: 'the server cancelled' });

  const pending = relay.request('carol', 'sampling/createMessage', {}, [], new AbortController().signal);
  relay.abandonAll();
  t.match(await pending, { error: { message: 'connection closed' } });

  relay.notification(null, 'notifications/message', { level: 'info' }, ['f1', 'f2']);
  t.match(events.at(-1), { type: 'notification', target: { forwardId: null, session: null } }, 'an ambiguous notification is for nobody in particular');
});

t.test('subscriptions: first subscriber subscribes upstream, last one unsubscribes; each keeps its URI', async (t) => {
  const subs = new Subscriptions();
  const source = { server: 'fs', original: 'file:///a' };
  let subscribed = 0;
  const subscribe = async () => void subscribed++;
  subs.add(source, { session: 'alice', uri: 'coffer://fs/file:///a', toolset: null });
  await subs.upstream(source, subscribe);
  subs.add(source, { session: 'bob', uri: 'coffer://fs/file:///a', toolset: 'ro' });
  await subs.upstream(source, subscribe);
  t.equal(subscribed, 1, 'the upstream is subscribed once, for the first subscriber');
  t.same(subs.subscribers('fs', 'file:///a').map(({ session, toolset }) => [session, toolset]), [['alice', null], ['bob', 'ro']], 'each with the toolset it subscribed through');
  t.equal(subs.remove(source, 'alice'), false);
  t.equal(subs.remove(source, 'alice'), false, 'twice is harmless');
  t.same(subs.dropSession('bob'), [source], 'the last subscriber gone: unsubscribe upstream');
  subs.add(source, { session: 'carol', uri: 'x', toolset: null });
  subs.dropServer('fs');
  t.same(subs.subscribers('fs', 'file:///a'), []);
});

t.test("shared mode: a subscriber that joins while the first one's upstream subscribe is under way is subscribed upstream, even when that one fails", async (t) => {
  const upstream = { name: 'fs', config: { session_mode: 'shared' } } as unknown as Upstream;
  const sent: Array<{ method: string; session: string; settle: (error?: Error) => void }> = [];
  const calls = {
    resolve: async (_kind: string, uri: unknown) => ({ upstream, target: { server: 'fs', original: String(uri).replace('coffer://fs/', '') } }),
    assertEnabled: () => undefined,
    admits: () => true,
    send: (_upstream: Upstream, method: string, _params: Record<string, unknown>, ctx: ForwardContext) =>
      new Promise<Record<string, unknown>>((resolve, reject) => void sent.push({ method, session: ctx.sessionId, settle: (error) => (error ? reject(error) : resolve({})) })),
  } as unknown as Calls;
  const features = new SessionFeatures(calls, { active: () => [upstream], get: () => upstream } as unknown as UpstreamDirectory, () => null, () => undefined);
  const ctx = (sessionId: string): ForwardContext => ({ sessionId, requestId: 1, capabilities: {}, signal: new Cancel() });
  const uri = 'coffer://fs/file:///a';
  const alice = features.subscribe({ uri }, ctx('alice'));
  await new Promise((resolve) => setImmediate(resolve));
  let bobDone = false;
  const bob = features.subscribe({ uri }, ctx('bob')).then(() => (bobDone = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(bobDone, false, "bob is not told he is subscribed while the upstream has not said so");
  // Alice's client goes while her subscribe is under way: it fails, and bob is still waiting for his.
  sent[0]!.settle(new Error('cancelled'));
  await t.rejects(alice, /cancelled/, 'alice is told hers failed');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(sent.map(({ method, session }) => [method, session]), [['resources/subscribe', 'alice'], ['resources/subscribe', 'bob']], 'the upstream is asked again, for bob');
  sent[1]!.settle();
  await bob;
  t.same(features.subscribers('fs', 'file:///a'), [['bob', uri]], 'bob gets the updates');
  const carol = await features.subscribe({ uri }, ctx('carol'));
  t.same(carol, {}, 'one who joins a standing upstream subscription is answered at once');
  t.equal(sent.length, 2, 'without asking the upstream again');
});

t.test('a session that closes while its subscribe is being resolved is not subscribed: the last one left unsubscribes upstream', async (t) => {
  const upstream = { name: 'fs', config: { session_mode: 'shared' }, closeSession: () => undefined } as unknown as Upstream;
  const sent: string[] = [];
  let resolving: (() => void) | null = null;
  const calls = {
    // The ghost's URI is resolved slowly (an unprefixed server's list is asked first).
    resolve: async (_kind: string, uri: unknown, _toolset: unknown) => {
      if (resolving === null && sent.length > 0) await new Promise<void>((resolve) => (resolving = resolve));
      return { upstream, target: { server: 'fs', original: String(uri).replace('coffer://fs/', '') } };
    },
    assertEnabled: () => undefined,
    admits: () => true,
    send: async (_upstream: Upstream, method: string, _params: Record<string, unknown>, ctx: ForwardContext) => (sent.push(`${method} ${ctx.sessionId}`), {}),
  } as unknown as Calls;
  const features = new SessionFeatures(calls, { active: () => [upstream], get: () => upstream } as unknown as UpstreamDirectory, () => null, () => undefined);
  const ctx = (sessionId: string, signal = new Cancel()): ForwardContext => ({ sessionId, requestId: 1, capabilities: {}, signal });
  const uri = 'coffer://fs/file:///a';
  await features.subscribe({ uri }, ctx('alice'));

  const ghostSignal = new Cancel();
  const ghost = features.subscribe({ uri }, ctx('ghost', ghostSignal));
  await new Promise((resolve) => setImmediate(resolve));
  // Its session closes (as SessionRegistry.close does: its requests are cancelled, then the session is dropped) before the URI is resolved.
  ghostSignal.abort('session closed');
  features.sessionClosed('ghost', new Cancel());
  resolving!();
  await t.rejects(ghost, { code: -32800 }, 'the subscribe is answered cancelled');
  t.same(features.subscribers('fs', 'file:///a'), [['alice', uri]], 'the closed session is no subscriber');
  await features.unsubscribe({ uri }, ctx('alice'));
  t.same(sent, ['resources/subscribe alice', 'resources/unsubscribe alice'], 'the last subscriber left: the upstream subscription ends');
});

t.test('a session subscribes to at most MAX_SESSION_SUBSCRIPTIONS resources: a flood of URIs is refused, not kept', async (t) => {
  const upstream = { name: 'fs', config: { session_mode: 'shared' } } as unknown as Upstream;
  let sent = 0;
  const calls = {
    resolve: async (_kind: string, uri: unknown) => ({ upstream, target: { server: 'fs', original: String(uri).replace('coffer://fs/', '') } }),
    assertEnabled: () => undefined,
    admits: () => true,
    send: async () => (sent++, {}),
  } as unknown as Calls;
  const features = new SessionFeatures(calls, { active: () => [upstream], get: () => upstream } as unknown as UpstreamDirectory, () => null, () => undefined);
  const ctx = (sessionId: string): ForwardContext => ({ sessionId, requestId: 1, capabilities: {}, signal: new Cancel() });
  for (let i = 0; i < MAX_SESSION_SUBSCRIPTIONS; i++) await features.subscribe({ uri: `coffer://fs/file:///${i}` }, ctx('flood'));
  const refused = await features.subscribe({ uri: 'coffer://fs/file:///one-more' }, ctx('flood')).catch((error: unknown) => error);
  t.match(refused, { code: -32602, data: { code: 'BAD_REQUEST' }, message: new RegExp(`${MAX_SESSION_SUBSCRIPTIONS}.*unsubscribe`) }, 'the next one is refused, saying what to do');
  t.equal(sent, MAX_SESSION_SUBSCRIPTIONS, 'and never reaches the upstream');
  t.same(features.subscribers('fs', 'file:///one-more'), [], 'nor is it kept');
  t.same(await features.subscribe({ uri: 'coffer://fs/file:///0' }, ctx('flood')), {}, 'subscribing again to one it holds is fine');
  t.same(await features.subscribe({ uri: 'coffer://fs/file:///one-more' }, ctx('other')), {}, 'another session is not held to it');
  await features.unsubscribe({ uri: 'coffer://fs/file:///0' }, ctx('flood'));
  t.same(await features.subscribe({ uri: 'coffer://fs/file:///one-more' }, ctx('flood')), {}, 'one unsubscribed makes room');
});

t.test('log levels: the most verbose wins upstream; each session filters its own', async (t) => {
  const levels = new LogLevels();
  t.equal(levels.mostVerbose(), null);
  t.equal(levels.admits('alice', 'debug', true), true, 'no level set: messages of own calls pass');
  t.equal(levels.admits('alice', 'debug', false), false, 'no level set: unrelated messages do not');
  levels.set('alice', 'warning');
  levels.set('bob', 'info');
  t.equal(levels.mostVerbose(), 'info');
  t.equal(levels.admits('alice', 'info', true), false);
  t.equal(levels.admits('alice', 'error', false), true);
  levels.drop('bob');
  t.equal(levels.mostVerbose(), 'warning');
  t.same(levels.sessions(), ['alice']);
});

t.test("the actor's protocol versions are the SDK's (it keeps its own copy to stay off zod)", async (t) => {
  t.equal(LATEST_PROTOCOL_VERSION, sdk.LATEST_PROTOCOL_VERSION);
  t.same(SUPPORTED_PROTOCOL_VERSIONS, sdk.SUPPORTED_PROTOCOL_VERSIONS);
});
