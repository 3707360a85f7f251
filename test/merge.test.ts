import t from 'tap';
import { mergeLists, type UpstreamList } from '../src/router/merge.js';
import { fitName } from '../src/router/names.js';
import { decodeCursor, encodeCursor, paginate, resumeAt } from '../src/router/pagination.js';
import { prefixIndex, resolveExposed } from '../src/router/resolver.js';
import type { ServerConfig } from '../src/protocol/server-config.js';

const all = () => true;
const list = (server: string, items: Array<Record<string, unknown>>, namespace = server): UpstreamList => ({ server, namespace, items });
const names = (lists: UpstreamList[]) => mergeLists('tools', lists, all).items.map((item) => item.name);

t.test('two upstreams with the same tool name are both listed, prefixed, fields unchanged', async (t) => {
  const tool = { name: 'echo', description: 'Echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } };
  const merged = mergeLists('tools', [list('b', [tool]), list('a', [tool])], all);
  t.same(merged.items.map((item) => item.name), ['a__echo', 'b__echo'], 'namespaced and ordered by server');
  t.same(merged.items[0], { ...tool, name: 'a__echo' });
  t.equal(tool.name, 'echo', 'the upstream item is not mutated');
  t.same(merged.routes.get('b__echo'), { server: 'b', original: 'echo' });
  t.same(merged.collisions, []);
});

t.test('disabled capabilities are filtered by key (the original name or URI)', async (t) => {
  const seen: string[] = [];
  const merged = mergeLists('resources', [list('files', [{ uri: 'file:///a' }, { uri: 'file:///b' }])], (server, kind, key) => {
    seen.push(`${server} ${kind} ${key}`);
    return key !== 'file:///b';
  });
  t.same(merged.items, [{ uri: 'coffer://files/file:///a' }]);
  t.same(seen, ['files resources file:///a', 'files resources file:///b']);
  t.same(merged.routes.get('coffer://files/file:///b'), { server: 'files', original: 'file:///b' }, 'a disabled item still routes (to be refused as disabled, not unknown)');
  t.same(mergeLists('resourceTemplates', [list('s', [{ uriTemplate: 'x://{id}' }])], all).items, [{ uriTemplate: 'coffer://s/x://{id}' }]);
  t.same(mergeLists('prompts', [list('s', [{ name: 'p' }])], all).items, [{ name: 's__p' }]);
});

t.test('a custom namespace prefixes instead of the name; the empty one passes names and URIs through', async (t) => {
  t.same(names([list('filesystem', [{ name: 'read' }], 'fs')]), ['fs__read']);
  t.same(names([list('solo', [{ name: 'read' }], '')]), ['read']);
  const resources = mergeLists('resources', [list('solo', [{ uri: 'test://static' }], '')], all);
  t.same(resources.items, [{ uri: 'test://static' }]);
  t.same(resources.routes.get('test://static'), { server: 'solo', original: 'test://static' });
});

t.test('unprefixed names that collide fall back to the server prefix, and say so', async (t) => {
  const merged = mergeLists('tools', [list('a', [{ name: 'echo' }, { name: 'only_a' }], ''), list('b', [{ name: 'echo' }], '')], all);
  t.same(merged.items.map((item) => item.name), ['a__echo', 'only_a', 'b__echo']);
  t.same(merged.collisions.map((c) => `${c.server}:${c.original}→${c.exposed}`), ['a:echo→a__echo', 'b:echo→b__echo']);
  // An unprefixed name equal to another server's prefixed name: the unprefixed one yields.
  t.same(names([list('x', [{ name: 'y__t' }], ''), list('y', [{ name: 't' }])]), ['x__y__t', 'y__t']);
  // A fallback that takes a third name makes that one fall back too; every exposed name stays unique.
  const chained = names([list('a', [{ name: 't' }, { name: 'a__t' }], ''), list('b', [{ name: 't' }], '')]);
  t.equal(new Set(chained).size, chained.length, `unique: ${chained.join(', ')}`);
  const routes = mergeLists('tools', [list('a', [{ name: 't' }, { name: 'a__t' }], ''), list('b', [{ name: 't' }], '')], all).routes;
  t.same([...routes.values()].map((r) => `${r.server}:${r.original}`).sort(), ['a:a__t', 'a:t', 'b:t'], 'each capability routes from exactly one name');
});

t.test("a hostile chain of names that fall back onto one another (t, a__t, a__a__t, ...) merges in one pass, not one pass per link", async (t) => {
  // Each link's fallback takes the next link's name: a pass over every entry per link, at every merge, stalled the router's thread for seconds.
  const chain: Array<Record<string, unknown>> = [];
  for (let name = 't'; chain.length < 1_000; name = `a__${name}`) chain.push({ name });
  const others = Array.from({ length: 20_000 }, (_unused, i) => ({ name: `tool_${i}` }));
  const started = performance.now();
  const merged = mergeLists('tools', [list('a', chain, ''), list('b', [{ name: 't' }], ''), list('c', others)], all, undefined, (name) => fitName(name, 64));
  const ms = performance.now() - started;
  t.equal(merged.collisions.length, 1_001, "every link falls back, and b's t");
  t.equal(new Set(merged.items.map((item) => item.name)).size, merged.items.length, 'every exposed name is unique');
  t.same(merged.collisions.slice(0, 2).map((c) => `${c.server}:${c.original}→${c.exposed}`), ['a:t→a__t', 'b:t→b__t'], 'in the order they fell');
  t.ok(ms < 1_500, `merged in ${Math.round(ms)} ms`);
});

t.test('resolution: known names first, then the prefix, then the only unprefixed server; never a guess', async (t) => {
  const config = (name: string, namespace = name) => ({ name, namespace }) as ServerConfig;
  const directory = (configs: ServerConfig[], routes?: Map<string, { server: string; original: string }>) => ({
    routes: () => routes,
    refresh: async () => routes,
    prefixes: () => prefixIndex(configs),
    original: (_server: string, _kind: string, name: string) => name,
  });
  const known = new Map([['echo', { server: 'solo', original: 'echo' }]]);
  t.same(await resolveExposed(directory([config('solo', ''), config('fs', 'files')], known), 'tools', 'echo'), { server: 'solo', original: 'echo' });
  t.same(await resolveExposed(directory([config('solo', ''), config('fs', 'files')], known), 'tools', 'files__read'), { server: 'fs', original: 'read', unlisted: true });
  t.same(await resolveExposed(directory([config('solo', ''), config('fs', 'files')], known), 'tools', 'fs__read'), { server: 'solo', original: 'fs__read', unlisted: true }, 'a server name that is not a prefix is no prefix');
  t.same(await resolveExposed(directory([config('solo', '')]), 'resources', 'test://template/1/data'), { server: 'solo', original: 'test://template/1/data', unlisted: true }, 'a URI from a template of the only unprefixed server');
  t.same(await resolveExposed(directory([config('a', ''), config('b', '')]), 'tools', 'nope'), { ambiguous: ['a', 'b'] });
  t.same(await resolveExposed(directory([config('a', ''), config('b', '')]), 'tools', 'a__echo'), { server: 'a', original: 'echo', unlisted: true }, 'the fallback form of an unprefixed server');
  t.equal(await resolveExposed(directory([config('a')]), 'tools', 'nope'), null);
});

t.test('pagination walks a large list with opaque cursors', async (t) => {
  // Items as lists hold them: a cursor names the last one given by its identity.
  const items = Array.from({ length: 25 }, (_, i) => ({ name: `t${i}` }));
  t.same(paginate('tools', items.slice(0, 5), 0, 10), { items: items.slice(0, 5) }, 'small list: one page, no cursor');
  const collected: Array<{ name: string }> = [];
  let offset = 0;
  for (;;) {
    const page = paginate('tools', items, offset, 10);
    collected.push(...page.items);
    if (!page.nextCursor) break;
    offset = resumeAt('tools', items, decodeCursor('tools', page.nextCursor)!)!;
  }
  t.same(collected, items);
  t.equal(decodeCursor('prompts', encodeCursor('tools', { offset: 10, after: 't9' })), null, 'a cursor of another list is refused');
  t.equal(decodeCursor('tools', 'not-a-cursor'), null);
  t.equal(decodeCursor('tools', Buffer.from('{"k":"tools","o":10}').toString('base64url')), null, 'one without the item it follows');
  const cursor = decodeCursor('tools', encodeCursor('tools', { offset: 10, after: 't9' }))!;
  t.equal(resumeAt('tools', [...items.slice(0, 3), ...items.slice(4)], cursor), 9, 'an item before it gone: the page after t9 still starts after t9');
  t.equal(resumeAt('tools', items.filter((item) => item.name !== 't9'), cursor), 9, 't9 itself gone: the page after it starts where it stood (t10, now at 9)');
  t.equal(decodeCursor('tools', Buffer.from('{"k":"tools","o":-1}').toString('base64url')), null);
});
