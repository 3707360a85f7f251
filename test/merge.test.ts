import t from 'tap';
import { mergeLists } from '../src/router/merge.js';
import { decodeCursor, encodeCursor, paginate } from '../src/router/pagination.js';

t.test('two upstreams with the same tool name are both listed, prefixed, fields unchanged', async (t) => {
  const tool = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } };
  const merged = mergeLists('tools', [{ server: 'b', items: [tool] }, { server: 'a', items: [tool] }], () => true);
  t.same(merged.map((item) => item.name), ['a__echo', 'b__echo'], 'namespaced and ordered by server');
  t.same(merged[0], { ...tool, name: 'a__echo' });
  t.equal(tool.name, 'echo', 'the upstream item is not mutated');
});

t.test('disabled capabilities are filtered by key (the original name or URI)', async (t) => {
  const seen: string[] = [];
  const merged = mergeLists(
    'resources',
    [{ server: 'files', items: [{ uri: 'file:///a' }, { uri: 'file:///b' }] }],
    (server, kind, key) => {
      seen.push(`${server} ${kind} ${key}`);
      return key !== 'file:///b';
    },
  );
  t.same(merged, [{ uri: 'coffer://files/file:///a' }]);
  t.same(seen, ['files resources file:///a', 'files resources file:///b']);
  t.same(mergeLists('resourceTemplates', [{ server: 's', items: [{ uriTemplate: 'x://{id}' }] }], () => true), [{ uriTemplate: 'coffer://s/x://{id}' }]);
  t.same(mergeLists('prompts', [{ server: 's', items: [{ name: 'p' }] }], () => true), [{ name: 's__p' }]);
});

t.test('pagination walks a large list with opaque cursors', async (t) => {
  const items = Array.from({ length: 25 }, (_, i) => i);
  t.same(paginate('tools', items.slice(0, 5), 0, 10), { items: [0, 1, 2, 3, 4] }, 'small list: one page, no cursor');
  const collected: number[] = [];
  let offset = 0;
  for (;;) {
    const page = paginate('tools', items, offset, 10);
    collected.push(...page.items);
    if (!page.nextCursor) break;
    offset = decodeCursor('tools', page.nextCursor)!;
  }
  t.same(collected, items);
  t.equal(decodeCursor('prompts', encodeCursor('tools', 10)), null, 'a cursor of another list is refused');
  t.equal(decodeCursor('tools', 'not-a-cursor'), null);
  t.equal(decodeCursor('tools', Buffer.from('{"k":"tools","o":-1}').toString('base64url')), null);
});
