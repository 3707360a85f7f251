// The pure parts of speaking the 2026-07-28 era upstream: the probe verdict,
// header values and x-mcp-header validation, the listen stream's retry delays.
import t from 'tap';
import { verdictOf, type ProbeOutcome } from '../workers/actor/era-negotiation.js';
import { ListCache, MIN_REFETCH_MS } from '../workers/actor/list-cache.js';
import { listenRetryMs } from '../workers/actor/listener.js';
import { toolHeaders } from '../src/protocol/mcp-param-headers.js';
import { headerValue, modernHeaders, withEnvelope } from '../src/protocol/modern-envelope.js';
import { bridgedCapabilities } from '../workers/actor/modern-session.js';

const discover = (versions: string[]): ProbeOutcome => ({ kind: 'result', result: { supportedVersions: versions, capabilities: {} } });

t.test('probe verdicts follow the spec: modern evidence, legacy fallback, no verdict on outages', async (t) => {
  t.equal(verdictOf(discover(['2026-07-28']), 'auto').era, 'modern');
  t.equal(verdictOf(discover(['2026-07-28']), '2026-07-28').era, 'modern');
  for (const outcome of [
    { kind: 'rpc-error', code: -32601, message: 'Method not found' },
    { kind: 'rpc-error', code: -32000, message: 'Bad request: no valid session' },
    { kind: 'http-status', status: 404, message: '' },
    { kind: 'http-status', status: 405, message: '' },
    { kind: 'silent' },
    { kind: 'exited' },
    discover(['2099-01-01']),
  ] as ProbeOutcome[]) {
    t.equal(verdictOf(outcome, 'auto').era, 'legacy', `auto: ${JSON.stringify(outcome)} ⇒ legacy`);
    t.match(verdictOf(outcome, '2026-07-28'), { era: 'none', message: /^(ERA_NEGOTIATION_FAILED|UPSTREAM_VERSION_MISMATCH)/ }, `pinned: ${outcome.kind} ⇒ failure`);
  }
  for (const status of [401, 403]) t.match(verdictOf({ kind: 'http-status', status, message: '' }, 'auto'), { era: 'none' }, `HTTP ${status} is no era verdict`);
  t.match(verdictOf({ kind: 'failed', message: 'ECONNREFUSED' }, 'auto'), { era: 'none', message: /ECONNREFUSED/ }, 'a network failure is an outage');
  t.match(
    verdictOf({ kind: 'rpc-error', code: -32022, message: 'Unsupported', data: { supported: ['2027-01-01'] } }, 'auto'),
    { era: 'none', message: /^UPSTREAM_VERSION_MISMATCH: the upstream offers protocol 2027-01-01/ },
    'a recognised modern error naming only versions coffer lacks is a mismatch, not a fallback',
  );
  t.equal(verdictOf({ kind: 'rpc-error', code: -32022, message: 'x', data: { supported: ['2025-06-18'] } }, 'auto').era, 'legacy', 'one naming a 2025 version falls back');
});

t.test('header values: plain visible ASCII, else the base64 sentinel', async (t) => {
  t.equal(headerValue('eu-west'), 'eu-west');
  t.equal(headerValue('file:///a b.txt'), 'file:///a b.txt');
  t.equal(headerValue(' padded'), `=?base64?${Buffer.from(' padded').toString('base64')}?=`);
  t.equal(headerValue('café'), `=?base64?${Buffer.from('café').toString('base64')}?=`);
  t.equal(headerValue('=?base64?abc?='), `=?base64?${Buffer.from('=?base64?abc?=').toString('base64')}?=`, 'sentinel-shaped values are encoded');
  const headers = modernHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: { n: 3, on: false, s: '', gone: null } } }, () => [
    { argument: 'n', header: 'N' },
    { argument: 'on', header: 'On' },
    { argument: 's', header: 'S' },
    { argument: 'gone', header: 'Gone' },
  ]);
  t.same(headers, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 't', 'mcp-param-n': '3', 'mcp-param-on': 'false', 'mcp-param-s': '' }, 'null is omitted');
  t.same(withEnvelope({ cursor: 'c', _meta: { progressToken: 1 } }, {}, { name: 'coffer', version: '1' })._meta, {
    progressToken: 1,
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'coffer', version: '1' },
  });
  t.match(withEnvelope(undefined, {}, { name: 'coffer', version: '1' }, 'info'), { _meta: { 'io.modelcontextprotocol/logLevel': 'info' } }, 'the caller\'s log level, when it wants messages');
});

t.test('the tasks extension upstream: Mcp-Name names the task, and the caller’s declaration of the extension is passed on', async (t) => {
  for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
    t.same(modernHeaders({ jsonrpc: '2.0', id: 1, method, params: { taskId: 'task-1' } }, () => []), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': 'task-1' }, method);
  }
  const tasks = { 'io.modelcontextprotocol/tasks': {} };
  t.same(bridgedCapabilities({ elicitation: {}, extensions: { ...tasks, 'x.example/other': {} }, experimental: {} }), { elicitation: {}, extensions: tasks }, 'only the extension coffer routes');
  t.same(bridgedCapabilities({ sampling: {} }), { sampling: {} }, 'none declared: none passed on');
});

t.test('x-mcp-header: valid annotations are mirrored, invalid ones exclude the tool', async (t) => {
  const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });
  t.same(toolHeaders(schema({ r: { type: 'string', 'x-mcp-header': 'Region' }, q: { type: 'string' } })), { ok: true, params: [{ argument: 'r', header: 'Region' }] });
  t.same(toolHeaders(schema({ n: { type: 'integer', 'x-mcp-header': 'N' }, b: { type: 'boolean', 'x-mcp-header': 'B' } })).ok, true);
  const invalid = {
    empty: schema({ r: { type: 'string', 'x-mcp-header': '' } }),
    'not a token': schema({ r: { type: 'string', 'x-mcp-header': 'Bad Header' } }),
    'repeated case-insensitively': schema({ a: { type: 'string', 'x-mcp-header': 'X' }, b: { type: 'string', 'x-mcp-header': 'x' } }),
    number: schema({ a: { type: 'number', 'x-mcp-header': 'A' } }),
    object: schema({ a: { type: 'object', 'x-mcp-header': 'A' } }),
    'inside items': schema({ a: { type: 'array', items: { type: 'string', 'x-mcp-header': 'A' } } }),
    'inside oneOf': schema({ a: { oneOf: [{ type: 'string', 'x-mcp-header': 'A' }] } }),
    'inside $defs': schema({ a: { $ref: '#/$defs/x' } }, { $defs: { x: { type: 'string', 'x-mcp-header': 'A' } } }),
  };
  for (const [label, input] of Object.entries(invalid)) t.equal(toolHeaders(input).ok, false, label);
});

t.test('the list cache honours an upstream ttlMs as an upper bound, never below the minimum interval', async (t) => {
  let now = 0;
  const cache = new ListCache(60_000, () => now);
  const list = { state: 'unsupported' as const };
  const zero = cache.store('tools', { ...list, ttlMs: 0 }, cache.generation('tools'));
  t.equal(cache.expiresAt(zero), MIN_REFETCH_MS, 'ttlMs 0 lives the minimum interval');
  const long = cache.store('prompts', { ...list, ttlMs: 3_600_000 }, cache.generation('prompts'));
  t.equal(cache.expiresAt(long), 60_000, "never longer than coffer's TTL");
  const short = cache.store('resources', { ...list, ttlMs: 5_000 }, cache.generation('resources'));
  now = 4_999;
  t.ok(cache.get('resources'), 'fresh within its ttlMs');
  now = 5_000;
  t.equal(cache.get('resources'), undefined, 'stale at its ttlMs');
  t.equal(cache.expiresAt(short), 5_000);
});

t.test('listen retries double up to a cap', async (t) => {
  t.same([1, 2, 3, 4].map(listenRetryMs), [500, 1_000, 2_000, 4_000]);
  t.equal(listenRetryMs(20), 30_000);
});
