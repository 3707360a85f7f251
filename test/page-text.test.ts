// A merged list's first page is written as JSON once per list and spliced
// into every answer: the same text for the same list, a new one for a new
// list (every merge is a new array), none kept for a cursor, and the answer's
// bytes are what serialising the page object would give.
import t from 'tap';
import { JsonText } from '../src/mcp/json-text.js';
import { listPageText } from '../src/mcp/page-text.js';
import { serialise } from '../src/mcp/post-exchange.js';
import { listPage } from '../src/mcp/surface.js';
import { encodeCursor } from '../src/router/pagination.js';

const tools = (names: string[]) => names.map((name) => ({ name, description: `the "${name}" tool\n`, inputSchema: { type: 'object' } }));

t.test('the first page is kept per list, era and page size; a new list is written anew', async (t) => {
  const list = tools(['a__one', 'a__two']);
  const first = listPageText('tools', list, {}, undefined, 'legacy');
  t.ok(first instanceof JsonText);
  t.equal(listPageText('tools', list, {}, undefined, 'legacy'), first, 'the same list: the same text, not written again');
  t.same(JSON.parse((first as JsonText).text), listPage('tools', list, {}, undefined));
  const finished = listPageText('tools', list, {}, undefined, 'modern', (page) => ({ ...page, ttlMs: 0 }));
  t.not(finished, first, 'another era has its own text');
  t.same(JSON.parse((finished as JsonText).text), { tools: list, ttlMs: 0 });
  t.not(listPageText('tools', list, {}, 1, 'legacy'), first, 'another page size has its own text');

  const changed = tools(['a__one']);
  t.same(JSON.parse((listPageText('tools', changed, {}, undefined, 'legacy') as JsonText).text), { tools: changed }, 'a re-merge is a new array: its own text');
});

t.test('a page after a cursor is an object, kept nowhere; a bad cursor is still refused', async (t) => {
  const list = tools(['a__one', 'a__two', 'a__three']);
  const second = listPageText('tools', list, { cursor: encodeCursor('tools', 2) }, 2, 'legacy');
  t.notOk(second instanceof JsonText);
  t.same(second, { tools: [list[2]] });
  t.throws(() => listPageText('tools', list, { cursor: 'nope' }, 2, 'legacy'), /invalid cursor/);
  t.throws(() => listPageText('tools', list, { cursor: 7 }, 2, 'legacy'), /invalid cursor/);
});

t.test('an answer carrying the text is the bytes of the object it stands for, through either serialiser', async (t) => {
  const list = tools(['a__one', 'a__two']);
  const page = listPageText('tools', list, {}, undefined, 'legacy');
  for (const id of [7, 'req-"7"']) {
    const spliced = serialise({ jsonrpc: '2.0', id, result: page });
    t.equal(spliced, JSON.stringify({ jsonrpc: '2.0', id, result: listPage('tools', list, {}, undefined) }), `id ${JSON.stringify(id)}: the same bytes`);
  }
  t.same(JSON.parse(JSON.stringify({ result: page })), { result: { tools: list } }, 'a serialiser that does not know the type writes the same JSON');
});
