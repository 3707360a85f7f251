// How an actor's list crosses to the main thread: bytes in a transferred
// buffer, never a structured clone of the items. A list of up to
// MSGPACK_FROM_ITEMS items travels as UTF-8 JSON, a longer one msgpackr-packed.
// Why two: an actor packs rarely (once per list fetch), so msgpackr's pack()
// always runs cold there, many times slower than JSON.stringify for a short
// list, and a hundred actors listing at once each pay it. On the (warm) main
// thread msgpackr decodes a long list faster than decode + JSON.parse, and a
// short one equally fast (list-decode.ts, the main thread's half). msgpackr
// is loaded by the first list long enough to be packed: most actors never
// list that many items, and each would otherwise hold it.
export const MSGPACK_FROM_ITEMS = 200;

export interface EncodedList {
  encoding: 'json' | 'msgpack';
  bytes: Uint8Array;
}

const encoder = new TextEncoder();
let packer: Promise<(value: unknown) => Buffer> | null = null;

/**
 * msgpackr's unpack() renames a `__proto__` key to `__proto_` (its guard
 * against prototype pollution); JSON.parse keeps it as an own key. A packed
 * list with those bytes anywhere (a key, or merely a value) goes as JSON.
 */
const PROTO_KEY = Buffer.from('__proto__');

function jsonList(items: readonly unknown[]): EncodedList {
  return { encoding: 'json', bytes: encoder.encode(JSON.stringify(items)) };
}

export async function encodeList(items: readonly unknown[]): Promise<EncodedList> {
  if (items.length < MSGPACK_FROM_ITEMS) return jsonList(items);
  const pack = await (packer ??= import('msgpackr').then((msgpackr) => msgpackr.pack));
  const packed = pack(items);
  if (packed.indexOf(PROTO_KEY) !== -1) return jsonList(items);
  // pack() returns a view into msgpackr's reused buffer: copy it out before keeping it.
  return { encoding: 'msgpack', bytes: new Uint8Array(packed) };
}

/** Same items, byte for byte (an actor's cache version moves only when this is false). */
export function sameList(a: EncodedList, b: EncodedList): boolean {
  return a.encoding === b.encoding && Buffer.compare(a.bytes, b.bytes) === 0;
}
