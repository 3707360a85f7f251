// URIs in call results are exposed the way lists expose them: table-driven
// cases of exposeResultUris, and the round trip back to the original URI.
import t from 'tap';
import { exposeResultUris } from '../src/router/expose-results.js';
import { parseNamespacedUri } from '../src/router/namespace.js';
import type { CallKind } from '../src/router/router.js';

type Json = Record<string, unknown>;

const link = (uri: string) => ({ type: 'resource_link', uri, name: 'n', mimeType: 'text/plain' });
const embedded = (uri: string) => ({ type: 'resource', resource: { uri, mimeType: 'text/plain', text: 'x' }, annotations: { priority: 1 } });
const text = { type: 'text', text: 'see demo://a' };

const cases: Array<{ name: string; kind: CallKind; result: Json; exposed: Json }> = [
  {
    name: 'tools/call: resource_link uri',
    kind: 'tools',
    result: { content: [text, link('demo://resource/dynamic/text/2')] },
    exposed: { content: [text, link('coffer://ev/demo://resource/dynamic/text/2')] },
  },
  {
    name: 'tools/call: embedded resource uri, the block\'s other fields kept',
    kind: 'tools',
    result: { content: [embedded('demo://r/1')], isError: false },
    exposed: { content: [embedded('coffer://ev/demo://r/1')], isError: false },
  },
  {
    name: 'tools/call: structuredContent and _meta are not walked, even when they hold a uri',
    kind: 'tools',
    result: { content: [link('a://1')], structuredContent: { uri: 'a://2', content: [link('a://3')] }, _meta: { uri: 'a://4' } },
    exposed: { content: [link('coffer://ev/a://1')], structuredContent: { uri: 'a://2', content: [link('a://3')] }, _meta: { uri: 'a://4' } },
  },
  {
    name: 'tools/call: blocks without a uri, a malformed block, a non-string uri',
    kind: 'tools',
    result: { content: [text, null, 7, { type: 'resource_link', uri: 42 }, { type: 'resource', resource: 'x' }, { type: 'image', data: 'AA==', mimeType: 'image/png' }] },
    exposed: { content: [text, null, 7, { type: 'resource_link', uri: 42 }, { type: 'resource', resource: 'x' }, { type: 'image', data: 'AA==', mimeType: 'image/png' }] },
  },
  {
    name: 'tools/call: a top-level contents field is not a tool result\'s',
    kind: 'tools',
    result: { content: [], contents: [{ uri: 'a://1' }] },
    exposed: { content: [], contents: [{ uri: 'a://1' }] },
  },
  {
    name: 'prompts/get: embedded resource and resource_link in messages',
    kind: 'prompts',
    result: { description: 'd', messages: [{ role: 'user', content: text }, { role: 'user', content: embedded('demo://r/1') }, { role: 'assistant', content: link('demo://r/2') }] },
    exposed: { description: 'd', messages: [{ role: 'user', content: text }, { role: 'user', content: embedded('coffer://ev/demo://r/1') }, { role: 'assistant', content: link('coffer://ev/demo://r/2') }] },
  },
  {
    name: 'prompts/get: malformed messages pass',
    kind: 'prompts',
    result: { messages: [null, 'x', { role: 'user' }] },
    exposed: { messages: [null, 'x', { role: 'user' }] },
  },
  {
    name: 'resources/read: every contents[].uri, text and blob',
    kind: 'resources',
    result: { contents: [{ uri: 'file:///tmp/a.txt', text: 'a' }, { uri: 'demo://b', blob: 'AA==', mimeType: 'application/octet-stream' }] },
    exposed: { contents: [{ uri: 'coffer://ev/file:///tmp/a.txt', text: 'a' }, { uri: 'coffer://ev/demo://b', blob: 'AA==', mimeType: 'application/octet-stream' }] },
  },
  {
    name: 'no array where one belongs: unchanged',
    kind: 'resources',
    result: { contents: { uri: 'a://1' } },
    exposed: { contents: { uri: 'a://1' } },
  },
];

t.test('exposeResultUris exposes exactly the URIs a client may send back', async (t) => {
  for (const { name, kind, result, exposed } of cases) {
    const before = structuredClone(result);
    t.same(exposeResultUris(kind, result, 'ev'), exposed, name);
    t.same(result, before, `${name}: the input is not mutated`);
  }
});

t.test('the empty namespace changes nothing, and a result with nothing to expose is the same object', async (t) => {
  for (const { name, kind, result } of cases) t.equal(exposeResultUris(kind, result, ''), result, `"" namespace: ${name}`);
  const plain = { content: [text, { type: 'image', data: 'AA==', mimeType: 'image/png' }] };
  t.equal(exposeResultUris('tools', plain, 'ev'), plain, 'no URI in it: not copied');
  const mixed = { content: [text, link('a://1')] };
  t.equal((exposeResultUris('tools', mixed, 'ev').content as unknown[])[0], text, 'unchanged blocks are shared, not copied');
});

t.test('an exposed URI parses back to its server and the original URI', async (t) => {
  for (const original of ['demo://resource/dynamic/text/2', 'file:///tmp/a b.txt', 'coffer://other/x', 'urn:x']) {
    const { content } = exposeResultUris('tools', { content: [link(original)] }, 'ev') as { content: Array<{ uri: string }> };
    t.same(parseNamespacedUri(content[0]!.uri), { server: 'ev', original }, original);
  }
});
