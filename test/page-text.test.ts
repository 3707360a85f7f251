// A merged list's first page is written as JSON once per list and spliced
// into every answer: the same text for the same list, a new one for a new
// list (every merge is a new array), none kept for a cursor, and the answer's
// bytes are what serialising the page object would give.
import t from 'tap';
import { JsonText } from '../src/mcp/json-text.js';
import { FirstPages } from '../src/mcp/page-text.js';
import { serialise } from '../src/mcp/post-exchange.js';
import { listPage } from '../src/mcp/surface.js';
import { encodeCursor } from '../src/router/pagination.js';

const tools = (names: string[]) => names.map((name) => ({ name, description: `the "${name}" tool\n`, inputSchema: { type: 'object' } }));

t.test('the first page is kept per list, era and page size; a new list is written anew', async (t) => {
  const legacy = new FirstPages(undefined);
  const list = tools(['a__one', 'a__two']);
  const first = legacy.page('tools', list, {});
  t.ok(first instanceof JsonText);
  t.equal(legacy.page('tools', list, {}), first, 'the same list: the same text, not written again');
  t.same(JSON.parse((first as JsonText).text), listPage('tools', list, {}, undefined));
  const finished = new FirstPages(undefined, (page) => ({ ...page, ttlMs: 0 })).page('tools', list, {});
  t.not(finished, first, 'another era has its own text');
  t.same(JSON.parse((finished as JsonText).text), { tools: list, ttlMs: 0 });
  t.not(new FirstPages(1).page('tools', list, {}), first, 'another page size has its own text');

  const changed = tools(['a__one']);
  t.same(JSON.parse((legacy.page('tools', changed, {}) as JsonText).text), { tools: changed }, 'a re-merge is a new array: its own text');
});

t.test('a page after a cursor is an object, kept nowhere; a bad cursor is still refused', async (t) => {
  const pages = new FirstPages(2);
  const list = tools(['a__one', 'a__two', 'a__three']);
  const second = pages.page('tools', list, { cursor: encodeCursor('tools', { offset: 2, after: 'a__two' }) });
  t.notOk(second instanceof JsonText);
  t.same(second, { tools: [list[2]] });
  t.throws(() => pages.page('tools', list, { cursor: 'nope' }), /invalid cursor/);
  t.throws(() => pages.page('tools', list, { cursor: 7 }), /invalid cursor/);
});

t.test('an answer carrying the text is the bytes of the object it stands for, through either serialiser', async (t) => {
  const list = tools(['a__one', 'a__two']);
  const page = new FirstPages(undefined).page('tools', list, {});
  for (const id of [7, 'req-"7"']) {
    const spliced = serialise({ jsonrpc: '2.0', id, result: page });
    t.equal(spliced, JSON.stringify({ jsonrpc: '2.0', id, result: listPage('tools', list, {}, undefined) }), `id ${JSON.stringify(id)}: the same bytes`);
  }
  t.same(JSON.parse(JSON.stringify({ result: page })), { result: { tools: list } }, 'a serialiser that does not know the type writes the same JSON');
});
