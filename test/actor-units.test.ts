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

t.test('schema normalisation keeps what it does not understand: a 2020-12 schema loses no keyword', async (t) => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { a: { $anchor: 'A', type: 'string' } },
    properties: { a: { $ref: '#/$defs/a' }, any: true, none: false, junk: 7 },
    required: ['a', 3],
    allOf: [{ anyOf: [{ required: ['a'] }] }],
    if: { required: ['a'] },
    then: {},
    else: { not: {} },
    unevaluatedProperties: false,
  };
  const { properties: _properties, required: _required, ...rest } = schema;
  t.same(repairInputSchema(schema), { ...rest, properties: { a: { $ref: '#/$defs/a' }, any: {}, none: { not: {} } }, required: ['a'] }, 'boolean subschemas become their object equivalents, non-schemas go, the rest stays');
  const valid = { type: 'object', properties: { a: { type: 'string' } }, allOf: [{ required: ['a'] }], if: {}, then: {}, else: {}, $defs: { x: { $anchor: 'X' } } };
  const { items, notes } = normaliseItems('tools', [
    { name: 'valid', inputSchema: valid },
    { name: 'typeless', inputSchema: { $defs: { x: {} }, properties: { a: true } }, outputSchema: { type: 'object', properties: { r: true }, $defs: { y: {} } } },
  ]);
  t.equal(items[0]!.inputSchema, valid, 'a schema strict clients take is the same object');
  t.same(items[1], { name: 'typeless', inputSchema: { type: 'object', $defs: { x: {} }, properties: { a: {} } }, outputSchema: { type: 'object', properties: { r: {} }, $defs: { y: {} } } });
  t.equal(notes.length, 2, 'both repairs are noted');
});

t.test('list cache: TTL, versions, drops, shared fetches', async (t) => {
  let now = 1_000;
  const cache = new ListCache(100, () => now);
  const live = (bytes: number[]) => ({ state: 'live' as const, list: { encoding: 'json' as const, bytes: new Uint8Array(bytes) } });

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

t.test('stdio: a child\'s stderr waits while the log stream is full, and loses nothing', async (t) => {
  const { Writable } = await import('node:stream');
  const { StdioTransport } = await import('../workers/actor/stdio-transport.js');
  const received: Buffer[] = [];
  let held: Array<() => void> = [];
  // A log stream that takes one chunk at a time and answers only when the test lets it.
  const log = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk);
      held.push(done);
    },
  });
  const LINES = 10_000;
  const transport = new StdioTransport({
    command: process.execPath,
    args: ['-e', `for (let i = 0; i < ${LINES}; i++) process.stderr.write('line ' + i + ' ' + 'x'.repeat(100) + '\\n'); setTimeout(() => {}, 60000);`],
    env: { PATH: process.env.PATH ?? '' },
    stderr: log,
  });
  t.teardown(() => transport.close());
  await transport.start();
  let maxDrainListeners = 0;
  let maxBuffered = 0;
  const text = () => Buffer.concat(received).toString('utf8');
  for (const until = Date.now() + 20_000; !text().includes(`line ${LINES - 1} `) && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    maxDrainListeners = Math.max(maxDrainListeners, log.listenerCount('drain'));
    maxBuffered = Math.max(maxBuffered, log.writableLength);
    const release = held;
    held = [];
    for (const done of release) done();
  }
  const lines = text().split('\n').filter((line) => line !== '');
  t.equal(lines.length, LINES, 'every stderr line reached the log, in order');
  t.ok(lines.every((line, i) => line.startsWith(`line ${i} `)));
  t.ok(maxDrainListeners <= 1, `at most one waiting drain listener on the log stream (saw ${maxDrainListeners})`);
  // ~1.1 MB written by the child; paused, the log holds at most about one pipe read (64 KB) beyond what it took.
  t.ok(maxBuffered <= 128 * 1024, `the log stream never buffered more than 128 KB (max ${maxBuffered} B)`);
});

t.test('stdio: a log stream that fails does not block the child on its stderr', async (t) => {
  const { Writable } = await import('node:stream');
  const { StdioTransport } = await import('../workers/actor/stdio-transport.js');
  // Fails its first write after a moment (a full disk): it is destroyed and never drains.
  const log = new Writable({ highWaterMark: 1, write: (_chunk, _encoding, done) => setTimeout(() => done(new Error('disk full')), 50) });
  log.on('error', () => {});
  const transport = new StdioTransport({
    command: process.execPath,
    args: ['-e', "process.stderr.write('x'.repeat(1 << 20), () => process.exit(0));"],
    env: { PATH: process.env.PATH ?? '' },
    stderr: log,
  });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  t.teardown(() => transport.close());
  await transport.start();
  const outcome = await Promise.race([closed.then(() => 'exited'), new Promise((resolve) => setTimeout(() => resolve('blocked'), 15_000))]);
  t.equal(outcome, 'exited', 'the child wrote its 1 MB of stderr and exited');
});
