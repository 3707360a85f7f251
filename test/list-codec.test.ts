// How an actor's list crosses to the main thread: JSON below MSGPACK_FROM_ITEMS
// items, msgpackr from there on; always in a buffer of its own (it is
// transferred, so it must not be a view into a shared pool).
import t from 'tap';
import { encodeList, MSGPACK_FROM_ITEMS, sameList } from '../src/protocol/list-codec.js';
import { decodeList } from '../src/protocol/list-decode.js';

const tools = (n: number) =>
  Array.from({ length: n }, (_unused, i) => ({ name: `t${i}`, description: `tool ${i} — ünïcode ✓`, inputSchema: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } }));

t.test('round trip, both encodings, chosen by item count', async (t) => {
  for (const [n, encoding] of [[0, 'json'], [20, 'json'], [MSGPACK_FROM_ITEMS - 1, 'json'], [MSGPACK_FROM_ITEMS, 'msgpack'], [2_000, 'msgpack']] as const) {
    const items = tools(n);
    const list = await encodeList(items);
    t.equal(list.encoding, encoding, `${n} items: ${encoding}`);
    t.equal(decodeList(list).length, n);
    t.same(decodeList(list), items, `${n} items decode to what was encoded`);
    t.equal(list.bytes.byteOffset, 0, 'not a view into a pooled buffer');
    t.equal(list.bytes.byteLength, list.bytes.buffer.byteLength, 'the buffer holds this list only, so transferring it detaches nothing else');
  }
});

t.test('a transferred (detached) list leaves the next encoding intact', async (t) => {
  const first = await encodeList(tools(MSGPACK_FROM_ITEMS));
  structuredClone(first.bytes, { transfer: [first.bytes.buffer as ArrayBuffer] });
  t.equal(first.bytes.byteLength, 0, 'detached');
  t.same(decodeList(await encodeList(tools(MSGPACK_FROM_ITEMS))), tools(MSGPACK_FROM_ITEMS));
});

t.test('sameList: same items byte for byte', async (t) => {
  t.ok(sameList(await encodeList(tools(3)), await encodeList(tools(3))));
  t.notOk(sameList(await encodeList(tools(3)), await encodeList(tools(4))));
  const changed = tools(3);
  changed[1]!.description = 'other';
  t.notOk(sameList(await encodeList(tools(3)), await encodeList(changed)));
  t.notOk(sameList(await encodeList(tools(MSGPACK_FROM_ITEMS)), { ...(await encodeList(tools(MSGPACK_FROM_ITEMS))), encoding: 'json' }), 'another encoding is another list');
});

t.test('a __proto__ key arrives unchanged in a list of any length (msgpackr would rename it)', async (t) => {
  for (const n of [1, MSGPACK_FROM_ITEMS, 2_000]) {
    const items = tools(n).map((tool, i) => (i === n - 1 ? { ...tool, inputSchema: JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') } : tool));
    const decoded = decodeList(await encodeList(items));
    const schema = decoded[n - 1]!.inputSchema as { properties: Record<string, unknown> };
    t.same(Object.keys(schema.properties), ['__proto__'], `${n} items: the key is kept`);
    t.equal(Object.getPrototypeOf(schema.properties), Object.prototype, `${n} items: as an own key, not the prototype`);
    t.equal(JSON.stringify(decoded), JSON.stringify(items), `${n} items: byte for byte the same JSON`);
  }
  t.equal((await encodeList(tools(MSGPACK_FROM_ITEMS))).encoding, 'msgpack', 'lists without it still go packed');
});
