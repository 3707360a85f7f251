// The era classifier of /mcp (src/mcp/era.ts): unit cases for each rule, and a
// differential against the SDK's own classifyInboundRequest
// (@modelcontextprotocol/server, what createMcpHandler runs) over generated
// requests: same era, same refusal (cell, HTTP status, JSON-RPC code).
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import t from 'tap';
import { classifyEra, type EraInput, type EraVerdict } from '../src/mcp/era.js';

const V = 'io.modelcontextprotocol/protocolVersion';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const INFO = 'io.modelcontextprotocol/clientInfo';
const LEVEL = 'io.modelcontextprotocol/logLevel';
const envelope = (extra: Record<string, unknown> = {}) => ({ [V]: '2026-07-28', [CAPS]: {}, ...extra });
const request = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

function summary(verdict: EraVerdict): string {
  if (verdict.kind === 'legacy') return `legacy:${verdict.reason}`;
  if (verdict.kind === 'modern') return `modern:${verdict.revision}`;
  return `reject:${verdict.cell}:${verdict.status}:${verdict.code}`;
}

function sdkSummary(input: EraInput): string {
  const outcome = classifyInboundRequest({
    httpMethod: input.httpMethod,
    ...(input.versionHeader !== undefined && { protocolVersionHeader: input.versionHeader }),
    ...(input.methodHeader !== undefined && { mcpMethodHeader: input.methodHeader }),
    body: input.body,
  });
  if (outcome.kind === 'legacy') return `legacy:${outcome.reason}`;
  if (outcome.kind === 'modern') return `modern:${outcome.classification.revision}`;
  return `reject:${outcome.cell}:${outcome.httpStatus}:${outcome.code}`;
}

t.test('the rules, one by one', async (t) => {
  const cases: Array<[string, EraInput, string]> = [
    ['GET is a legacy session operation', { httpMethod: 'GET' }, 'legacy:http-method'],
    ['DELETE too', { httpMethod: 'DELETE' }, 'legacy:http-method'],
    ['initialize is the legacy handshake', { httpMethod: 'POST', body: request('initialize', { protocolVersion: '2025-11-25', capabilities: {} }) }, 'legacy:initialize'],
    ['a claim-less request is legacy', { httpMethod: 'POST', body: request('tools/list') }, 'legacy:no-claim'],
    ['a posted response is legacy', { httpMethod: 'POST', body: { jsonrpc: '2.0', id: 'x', result: {} } }, 'legacy:response'],
    ['an all-legacy batch is legacy', { httpMethod: 'POST', body: [request('tools/list'), request('ping', undefined, 2)] }, 'legacy:batch'],
    ['a claim makes it modern', { httpMethod: 'POST', versionHeader: '2026-07-28', methodHeader: 'tools/list', body: request('tools/list', { _meta: envelope() }) }, 'modern:2026-07-28'],
    ['a claim without headers is still modern (the headers are checked later)', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope() }) }, 'modern:2026-07-28'],
    ['an unknown future version is modern (refused later with -32022)', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope({ [V]: '2030-01-01' }) }) }, 'modern:2030-01-01'],
    ['a claim without capabilities is refused', { httpMethod: 'POST', body: request('tools/list', { _meta: { [V]: '2026-07-28' } }) }, 'reject:envelope-invalid:400:-32602'],
    ['a bad log level is refused', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope({ [LEVEL]: 'loud' }) }) }, 'reject:envelope-invalid:400:-32602'],
    ['a clientInfo without version is refused', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope({ [INFO]: { name: 'x' } }) }) }, 'reject:envelope-invalid:400:-32602'],
    ['a version claim that is not a string is refused', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope({ [V]: 5 }) }) }, 'reject:envelope-invalid:400:-32602'],
    ['a clientInfo without name is refused', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope({ [INFO]: { version: '1' } }) }) }, 'reject:envelope-invalid:400:-32602'],
    ['a clientInfo icon without src is refused', { httpMethod: 'POST', body: request('tools/list', { _meta: envelope({ [INFO]: { name: 'x', version: '1', icons: [{}] } }) }) }, 'reject:envelope-invalid:400:-32602'],
    ['header and claim disagree', { httpMethod: 'POST', versionHeader: '2025-11-25', body: request('tools/list', { _meta: envelope() }) }, 'reject:header-body-version-mismatch:400:-32020'],
    ['Mcp-Method and method disagree', { httpMethod: 'POST', methodHeader: 'tools/call', body: request('tools/list', { _meta: envelope() }) }, 'reject:method-header-mismatch:400:-32020'],
    ['a modern header without an envelope', { httpMethod: 'POST', versionHeader: '2026-07-28', body: request('tools/list') }, 'reject:modern-header-without-claim:400:-32602'],
    ['initialize with a modern header', { httpMethod: 'POST', versionHeader: '2026-07-28', body: request('initialize', {}) }, 'reject:initialize-with-modern-header:400:-32020'],
    ['a batch with a modern element', { httpMethod: 'POST', body: [request('tools/list', { _meta: envelope() })] }, 'reject:batch-with-modern-element:400:-32600'],
    ['initialize whose envelope claims a legacy revision is the legacy handshake', { httpMethod: 'POST', body: request('initialize', { _meta: envelope({ [V]: '2025-11-25' }) }) }, 'legacy:initialize'],
    ['a related-task without a string taskId is no valid request', { httpMethod: 'POST', body: request('tools/list', { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 5 } } }) }, 'reject:invalid-json-rpc-body:400:-32600'],
    ['OWS around header values is ignored', { httpMethod: 'POST', versionHeader: ' 2026-07-28\t', methodHeader: ' tools/list', body: request('tools/list', { _meta: envelope() }) }, 'modern:2026-07-28'],
  ];
  for (const [what, input, expected] of cases) {
    t.equal(summary(classifyEra(input)), expected, what);
    t.equal(sdkSummary(input), expected, `${what} (the SDK agrees)`);
  }
});

t.test('a modern header without a claim is refused naming every envelope key the request lacks', async (t) => {
  const missing = (params?: unknown) => {
    const verdict = classifyEra({ httpMethod: 'POST', versionHeader: '2026-07-28', body: request('tools/list', params) });
    return verdict.kind === 'reject' ? (verdict.data as { envelope: { missing: string[] } }).envelope.missing : verdict.kind;
  };
  t.same(missing(), ['_meta'], 'no _meta at all');
  t.same(missing({ _meta: {} }), [V, CAPS], 'an empty _meta lacks both required keys');
  t.same(missing({ _meta: { [CAPS]: {} } }), [V], 'capabilities without the version claim');
});

const versions = fc.constantFrom('2026-07-28', '2025-11-25', '2025-06-18', '2030-01-01', 'junk', ' 2026-07-28 ');
const json = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 4 }), fc.constant([]), fc.constant({}));
const capabilities = fc.oneof(
  fc.constant({}),
  fc.constant({ sampling: {} }),
  fc.constant({ elicitation: { form: {} }, roots: { listChanged: true } }),
  fc.constant({ roots: { listChanged: 'yes' } }),
  fc.constant({ experimental: { x: {} }, extensions: { 'a/b': {} } }),
  fc.constant({ experimental: { x: 1 } }),
  fc.constant({ sampling: [] }),
  json,
);
const clientInfo = fc.oneof(fc.constant({ name: 'c', version: '1' }), fc.constant({ name: 'c' }), fc.constant({ name: 'c', version: '1', title: 2 }), json);
const meta = fc.record(
  {
    [V]: fc.oneof(versions, json),
    [CAPS]: capabilities,
    [INFO]: clientInfo,
    [LEVEL]: fc.oneof(fc.constantFrom('debug', 'error', 'loud'), json),
    progressToken: fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.double(), fc.constant(null)),
    other: json,
  },
  { requiredKeys: [] },
);
/** Mostly well-formed envelopes, so the header cross-checks are reached often. */
const goodMeta = fc.record({ [V]: versions, [CAPS]: fc.constantFrom({}, { sampling: {} }), [LEVEL]: fc.constantFrom('debug', 'info') }, { requiredKeys: [V, CAPS] });
/** A 2026-07-28 claim whose other envelope keys are often malformed, so the envelope check is reached every run. */
const claimedMeta = fc.record({ [V]: fc.constant('2026-07-28'), [CAPS]: capabilities, [INFO]: clientInfo }, { requiredKeys: [V] });
const params = fc.oneof(
  fc.constant(undefined),
  fc.record({ _meta: goodMeta, name: fc.constantFrom('a', 'b') }, { requiredKeys: ['_meta'] }),
  fc.record({ _meta: claimedMeta, name: fc.constantFrom('a', 'b') }, { requiredKeys: ['_meta'] }),
  fc.record({ _meta: fc.oneof(meta, json), name: fc.constantFrom('a', 'b'), protocolVersion: versions }, { requiredKeys: [] }),
  json,
);
const methods = fc.constantFrom('tools/list', 'tools/call', 'initialize', 'server/discover', 'notifications/initialized', 'subscriptions/listen');
const message = fc.oneof(
  fc.record({ jsonrpc: fc.constantFrom('2.0', '1.0'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.double(), fc.constant(null)), method: methods, params }, { requiredKeys: ['jsonrpc', 'method'] }),
  fc.record({ jsonrpc: fc.constant('2.0'), method: methods, params }, { requiredKeys: ['jsonrpc', 'method'] }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })), result: fc.oneof(fc.constant({}), json) }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), error: fc.oneof(fc.constant({ code: -1, message: 'm' }), json) }, { requiredKeys: ['jsonrpc', 'error'] }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: methods, params, extra: json }),
  json,
);
/**
 * A well-formed JSON-RPC request with a valid claim, a claim with malformed envelope keys, or none: each verdict
 * the test requires below (the header cross-checks included) is then reached dozens of times in every run.
 */
const wellFormedRequest = fc.record({
  jsonrpc: fc.constant('2.0'),
  id: fc.integer(),
  method: methods,
  params: fc.oneof(fc.constant({ _meta: envelope(), name: 'a' }), fc.record({ _meta: claimedMeta }), fc.constant({ name: 'a' })),
});
const input = fc.record(
  {
    httpMethod: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'DELETE', 'post'),
    versionHeader: versions,
    methodHeader: fc.oneof(methods, fc.constant(' tools/list ')),
    body: fc.oneof(message, message, wellFormedRequest, fc.array(message, { maxLength: 3 })),
  },
  { requiredKeys: ['httpMethod'] },
);

t.test('differential: the same verdict as the SDK classifier on generated requests', async (t) => {
  let checked = 0;
  const seen = new Set<string>();
  fc.assert(
    fc.property(input, (generated) => {
      checked++;
      const mine = summary(classifyEra(generated));
      seen.add(mine);
      const theirs = sdkSummary(generated);
      if (mine !== theirs) throw new Error(`coffer ${mine} vs SDK ${theirs} for ${JSON.stringify(generated)}`);
    }),
    { numRuns: 5000 },
  );
  t.equal(checked >= 5000, true, `${checked} generated requests agree`);
  // The generator reaches every kind of verdict, so agreement is not agreement on legacy alone.
  for (const verdict of ['modern:2026-07-28', 'legacy:no-claim', 'legacy:batch', 'reject:envelope-invalid:400:-32602', 'reject:header-body-version-mismatch:400:-32020', 'reject:method-header-mismatch:400:-32020', 'reject:batch-with-modern-element:400:-32600']) {
    t.ok(seen.has(verdict), `generated: ${verdict}`);
  }
  t.comment(`verdicts seen: ${[...seen].sort().join(', ')}`);
});
