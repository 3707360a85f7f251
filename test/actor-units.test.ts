// The actor's pure modules: backoff, child environment, schema normalisation, list cache.
import t from 'tap';
import { retryPlan } from '../workers/actor/backoff.js';
import { childEnv } from '../workers/actor/child-env.js';
import { ListCache } from '../workers/actor/list-cache.js';
import { isObjectSchema, normaliseItems, repairInputSchema } from '../workers/actor/normalise-schema.js';

const tuning = { backoffInitialMs: 100, backoffMaxMs: 1_000, crashLoopLimit: 5 };

t.test('backoff doubles, jitters within half of the delay, caps, then fails', async (t) => {
  t.same(retryPlan(1, tuning, () => 0), { state: 'backoff', delayMs: 50 });
  t.same(retryPlan(1, tuning, () => 1), { state: 'backoff', delayMs: 100 });
  t.same(retryPlan(3, tuning, () => 1), { state: 'backoff', delayMs: 400 });
  t.same(retryPlan(4, tuning, () => 1), { state: 'backoff', delayMs: 800 });
  t.same(retryPlan(4, { ...tuning, backoffMaxMs: 500 }, () => 1), { state: 'backoff', delayMs: 500 });
  t.same(retryPlan(5, tuning, () => 0), { state: 'failed', delayMs: 1_000 });
  t.same(retryPlan(50, tuning, () => 0.5), { state: 'failed', delayMs: 1_000 });
});

t.test('child env keeps what a program needs, drops secrets and NODE_OPTIONS, adds configured env', async (t) => {
  const env = childEnv(
    { PATH: '/bin', HOME: '/home/me', LANG: 'C.UTF-8', LC_ALL: 'C', TMPDIR: '/tmp', NODE_OPTIONS: '--inspect', AWS_SECRET_ACCESS_KEY: 's', BASH_FUNC_x: '() { :; }', SHELL: '() { evil; }' },
    { API_TOKEN: 'configured', PATH: '/custom/bin' },
  );
  t.same(env, { PATH: '/custom/bin', HOME: '/home/me', LANG: 'C.UTF-8', LC_ALL: 'C', TMPDIR: '/tmp', API_TOKEN: 'configured' });
});

t.test('schema normalisation', async (t) => {
  t.ok(isObjectSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }));
  t.notOk(isObjectSchema({ properties: {} }));
  t.notOk(isObjectSchema({ type: 'object', properties: { a: 'string' } }));
  t.notOk(isObjectSchema({ type: 'object', required: [1] }));
  t.same(repairInputSchema(undefined), { type: 'object' });
  t.same(repairInputSchema({ type: 'string', properties: { x: {} }, required: ['x', 2] }), { type: 'object', properties: { x: {} }, required: ['x'] });
  t.same(repairInputSchema({ properties: 'nope', required: 'x' }), { type: 'object' });

  const good = { name: 'good', inputSchema: { type: 'object', additionalProperties: false } };
  const { items, notes } = normaliseItems('tools', [
    good,
    { name: 'untyped', inputSchema: { properties: { q: { type: 'string' } } } },
    { name: 'missing' },
    { name: 'badOut', inputSchema: { type: 'object' }, outputSchema: { type: 'array' } },
    { name: 'goodOut', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { r: { type: 'number' } } } },
    { name: 'numDesc', description: 7, inputSchema: { type: 'object' } },
    { description: 'nameless' },
    'not an object',
    { name: 'good', inputSchema: { type: 'object' } },
  ]);
  t.equal(items[0], good, 'a valid item is passed through as the same object');
  t.same(items.map((item) => item.name), ['good', 'untyped', 'missing', 'badOut', 'goodOut', 'numDesc']);
  t.same(items[1]!.inputSchema, { type: 'object', properties: { q: { type: 'string' } } });
  t.same(items[2]!.inputSchema, { type: 'object' });
  t.notOk('outputSchema' in items[3]!);
  t.same(items[4]!.outputSchema, { type: 'object', properties: { r: { type: 'number' } } });
  t.notOk('description' in items[5]!);
  t.equal(notes.length, 7, 'every change is noted for the log');
  t.match(notes.join('\n'), /tools\[6\]: no string name, dropped/);
  t.match(notes.join('\n'), /duplicate name good/);

  const resources = normaliseItems('resources', [{ uri: 'a://1' }, { uri: 'a://2', name: 'two' }, { name: 'no uri' }]).items;
  t.same(resources, [{ uri: 'a://1', name: 'a://1' }, { uri: 'a://2', name: 'two' }], 'resources get a name, uri-less ones are dropped');
  t.same(normaliseItems('resourceTemplates', [{ uriTemplate: 'a://{x}' }, { uri: 'a://1' }]).items, [{ uriTemplate: 'a://{x}', name: 'a://{x}' }]);
  const prompts = normaliseItems('prompts', [{ name: 'p', arguments: [{ name: 'a' }, { nope: 1 }] }, { name: 'q', arguments: 'x' }]).items;
  t.same(prompts, [{ name: 'p', arguments: [{ name: 'a' }] }, { name: 'q', arguments: [] }]);
});

t.test('list cache: TTL, versions, drops, shared fetches', async (t) => {
  let now = 1_000;
  const cache = new ListCache(100, () => now);
  const live = (bytes: number[]) => ({ state: 'live' as const, packed: new Uint8Array(bytes), count: bytes.length });

  t.equal(cache.get('tools'), undefined);
  const first = cache.store('tools', live([1, 2]), cache.generation('tools'));
  t.equal(cache.get('tools'), first);
  now += 99;
  t.ok(cache.get('tools'), 'still fresh just before the TTL');
  now += 1;
  t.equal(cache.get('tools'), undefined, 'expired at the TTL');

  const same = cache.store('tools', live([1, 2]), cache.generation('tools'));
  t.equal(same.version, first.version, 'same content keeps its version');
  const changed = cache.store('tools', live([1, 3]), cache.generation('tools'));
  t.not(changed.version, first.version, 'new content gets a new version');
  const unsupported = cache.store('prompts', { state: 'unsupported' }, cache.generation('prompts'));
  t.equal(cache.get('prompts'), unsupported);

  const before = cache.generation('tools');
  t.equal(cache.drop('tools'), true);
  t.equal(cache.drop('tools'), false, 'nothing left to drop');
  cache.store('tools', live([9]), before);
  t.equal(cache.get('tools'), undefined, 'a fetch that started before a drop does not refill the cache');

  cache.store('tools', live([4]), cache.generation('tools'));
  t.same(cache.dropAll().sort(), ['prompts', 'tools']);

  let fetches = 0;
  let release!: (value: string) => void;
  const fetch = () => {
    fetches += 1;
    return new Promise<string>((resolve) => (release = resolve));
  };
  const a = cache.shared('resources', fetch);
  const b = cache.shared('resources', fetch);
  release('done');
  t.same(await Promise.all([a, b]), ['done', 'done']);
  t.equal(fetches, 1, 'concurrent callers share one fetch');
  const later = cache.shared('resources', fetch);
  t.equal(fetches, 2, 'a call after the fetch finished starts a new one');
  release('again');
  t.equal(await later, 'again');
});
