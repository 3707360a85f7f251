// ListenRegistry on the class itself, with stand-ins for the router and the
// HTTP reply: what a subscriptions/listen holds while it subscribes its
// resources, and that a client leaving then (or its credential going) lets all
// of it go.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { HttpReply } from '../src/http/reply.js';
import type { ForwardContext } from '../src/router/calls.js';
import type { SessionFeatures } from '../src/router/session-features.js';
import { ListenRegistry, MAX_LISTENS } from '../src/mcp/modern/listen.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const views = { list: async () => [], forget: () => {}, viewOf: () => null };

function reply(): HttpReply & { abort(): void; sent: string[] } {
  const handlers: Array<() => void> = [];
  const sent: string[] = [];
  return {
    aborted: false,
    sent,
    onAbort: (handler) => void handlers.push(handler),
    abort() {
      (this as { aborted: boolean }).aborted = true;
      for (const handler of handlers) handler();
    },
    send: (_status, _headers, body) => void sent.push(body),
    startStream: (_status, _headers, chunk) => void sent.push(chunk),
    write: (chunk) => void sent.push(chunk),
    fetch: async () => {},
  };
}

t.test('a client that leaves while its listen subscribes (an upstream slow to answer) ends it: the rest is not subscribed, the slot is free', async (t) => {
  const asked: string[] = [];
  const closed: string[] = [];
  // An upstream that answers resources/subscribe only when the request is cancelled.
  const features = {
    subscribe: (params: Record<string, unknown>, ctx: ForwardContext) => {
      asked.push(String(params.uri));
      return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }));
    },
    sessionClosed: (id: string) => void closed.push(id),
  } as unknown as SessionFeatures;
  const registry = new ListenRegistry(features, views, 60_000, { name: 'coffer', version: '0' }, log as never);
  const replies = Array.from({ length: MAX_LISTENS }, reply);
  const uris = ['coffer://a/1', 'coffer://a/2', 'coffer://a/3'];
  const served = replies.map((each, i) => registry.serve(i, { notifications: { resourceSubscriptions: uris } }, {}, { credential: 'client:a', toolset: null }, each));
  await sleep(10);
  const late = reply();
  await registry.serve('late', { notifications: { toolsListChanged: true } }, {}, { credential: 'client:a', toolset: null }, late);
  t.match(late.sent[0], /Subscription limit reached/, 'the subscribing listens hold every slot');
  for (const each of replies) each.abort();
  await Promise.race([Promise.all(served), sleep(2_000)]);
  t.equal(asked.length, MAX_LISTENS, 'each asked for its first resource only');
  t.equal(closed.length, MAX_LISTENS, 'and ended, its subscriptions with it');
  const again = reply();
  await registry.serve('again', { notifications: { toolsListChanged: true } }, {}, { credential: 'client:a', toolset: null }, again);
  t.match(again.sent[0], /acknowledged/, 'a new listen is served');
});

t.test("a listen still subscribing its resources when its credential goes ends as an open one does; another credential's is left alone", async (t) => {
  const closed: string[] = [];
  // An upstream that answers resources/subscribe only when the request is cancelled: the listen is still subscribing when the credential goes.
  const features = {
    subscribe: (_params: Record<string, unknown>, ctx: ForwardContext) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true })),
    sessionClosed: (id: string) => void closed.push(id),
  } as unknown as SessionFeatures;
  const registry = new ListenRegistry(features, views, 60_000, { name: 'coffer', version: '0' }, log as never);
  const params = { notifications: { toolsListChanged: true, resourceSubscriptions: ['coffer://a/1', 'coffer://a/2'] } };
  const gone = reply();
  const kept = reply();
  const served = registry.serve('gone', params, {}, { credential: 'client:gone', toolset: null }, gone);
  const other = registry.serve('kept', params, {}, { credential: 'client:kept', toolset: null }, kept);
  await sleep(10);
  registry.closeCredential('client:gone');
  t.equal(await Promise.race([served.then(() => 'ended'), sleep(2_000).then(() => 'still subscribing')]), 'ended', "the revoked credential's listen ends");
  t.equal(closed.length, 1, 'its subscriptions with it');
  t.equal(registry.size, 0, 'it never opens');
  t.equal(gone.sent.at(-1), '', 'its stream ends without a result, as an open listen closed for its credential does');
  t.same(kept.sent, [], "the other credential's listen is still subscribing");
  kept.abort();
  await other;
});
