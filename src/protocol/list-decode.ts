// The main thread's half of list-codec.ts: an actor's list as items again.
// Apart from the encoding so that an actor, which only encodes, never loads
// msgpackr for this.
import { unpack } from 'msgpackr';
import type { EncodedList } from './list-codec.js';

const decoder = new TextDecoder();

export function decodeList(list: EncodedList): Record<string, unknown>[] {
  return (list.encoding === 'json' ? JSON.parse(decoder.decode(list.bytes)) : unpack(list.bytes)) as Record<string, unknown>[];
}
