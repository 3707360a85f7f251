// The actor's defences against upstream output, unit by unit: huge lines and
// SSE events are joined once (not re-copied per chunk) and dropped past the
// cap without losing the messages after them; list_changed floods coalesce.
import t from 'tap';
import { Coalescer } from '../workers/actor/coalesce.js';
import { MessageTooLargeError } from '../workers/actor/limits.js';
import { SseParser } from '../src/protocol/sse-parser.js';
import { LineSplitter } from '../workers/actor/stdio-transport.js';

const chunked = (text: string, size: number): string[] => Array.from({ length: Math.ceil(text.length / size) }, (_unused, i) => text.slice(i * size, (i + 1) * size));

t.test('stdio lines: a 50 MB line in 64 KB chunks is joined in linear time', async (t) => {
  const lines = new LineSplitter();
  const big = `{"x":"${'a'.repeat(50 * 1024 * 1024)}"}`;
  const started = Date.now();
  const out: Array<string | Error> = [];
  for (const chunk of chunked(`${big}\n{"after":1}\n`, 64 * 1024)) out.push(...lines.push(chunk));
  t.equal(out.length, 2);
  t.equal((out[0] as string).length, big.length);
  t.equal(out[1], '{"after":1}');
  t.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
});

t.test('stdio lines: a line over the cap is dropped once; the lines around it survive', async (t) => {
  const lines = new LineSplitter(10);
  t.same(lines.push('{"a":1}\n0123456'), ['{"a":1}']);
  const dropped = lines.push('789abcdef');
  t.equal(dropped.length, 1);
  t.ok(dropped[0] instanceof MessageTooLargeError, 'reported as too large');
  t.same(lines.push('more of it'), [], 'the rest of the long line is skipped silently');
  t.same(lines.push(' end\n{"b":2}\r\n'), ['{"b":2}'], 'the next line is whole, CR removed');
  const atOnce = lines.push('0123456789abc\nok\n');
  t.ok(atOnce[0] instanceof MessageTooLargeError, 'a long line within one chunk is dropped too');
  t.equal(atOnce[1], 'ok');
});

t.test('SSE: a huge event in small chunks is one event; CR split across chunks still one line end', async (t) => {
  const parser = new SseParser();
  const data = 'b'.repeat(5 * 1024 * 1024);
  const events = chunked(`data: ${data}\r\n\r\ndata: next\n\n`, 4096).flatMap((chunk) => parser.push(chunk));
  t.same(events.map((event) => event.data.length), [data.length, 4]);
  t.same(parser.push('data: x\r'), []);
  t.same(parser.push('\n\r').map((event) => event.data), ['x'], 'the CR LF pair is one line end, the second CR ends the blank line');
  t.same(parser.push('\ndata: y\n\n').map((event) => event.data), ['y'], 'the LF after that CR is not another blank line');
});

t.test('SSE: an event over the cap is dropped and counted; the next one is parsed', async (t) => {
  const parser = new SseParser(16);
  t.same(parser.push('data: 0123456789'), []);
  t.same(parser.push('abcdefghij'), [], 'the line grew past the cap');
  t.equal(parser.dropped, 1);
  t.same(parser.push('\ndata: more\n\n'), [], 'the rest of the dropped event is skipped');
  t.same(parser.push('data: ok\n\n').map((event) => event.data), ['ok']);
  t.same(parser.push('data: 0123456789\ndata: 0123456789\n\ndata: fine\n\n').map((event) => event.data), ['fine'], 'many data lines past the cap');
  t.equal(parser.dropped, 2);
});

t.test('SSE: an event over the cap inside one chunk, or ended by line ends split across chunks, is dropped alone', async (t) => {
  const parser = new SseParser(16);
  t.same(parser.push('data: 0123456789abcdefghij\n\ndata: ok\n\n').map((event) => event.data), ['ok'], 'a whole one-line event in one chunk');
  t.equal(parser.dropped, 1);
  t.same(parser.push('data: 0123456789abcdefghij\r'), []);
  t.same(parser.push('\n\r'), [], 'CR LF, then the CR of the blank line');
  t.same(parser.push('\ndata: next\r\n\r\n').map((event) => event.data), ['next'], 'the LF after that CR is not one more line');
  t.equal(parser.dropped, 2);
});

t.test('SSE: two CRs ending a chunk are a line end and a blank line at once', async (t) => {
  const parser = new SseParser();
  t.same(parser.push('event: x\r\r').map((event) => event.event), [], 'an event without data is not dispatched');
  t.same(parser.push('\ndata: a\r\r').map((event) => [event.event, event.data]), [['message', 'a']], 'the event type was reset by the blank line');
  t.same(parser.push('\ndata: b\n\n').map((event) => event.data), ['b'], 'the LF after the last CR belongs to it');
});

t.test('SSE: between events only once a blank line ends the text (comment lines after it aside), split line ends and a skipped event included', async (t) => {
  const parser = new SseParser(16);
  const between = (chunk: string): boolean => (parser.push(chunk), parser.betweenEvents);
  t.same(['data: a', '\n', '\n', ': ping\r', '\n\r', '\n', ':\n\n', 'data: b\r\n\r\n'].map(between), [false, false, true, true, true, true, true, true]);
  t.same([': pi', 'ng\n', 'data: c\n', ': ping\n', '\n'].map(between), [false, true, false, false, true], 'a comment line holds nothing, but does not end an event');
  t.same(['data: 0123456789abcdefghij', '\n', 'x\n\n'].map(between), [false, false, true], 'an event dropped for its size: between events once its blank line came');
  t.same(['id: 1\nretry: 5', '\n\n'].map(between), [false, true]);
});

t.test('coalescer: the first passes at once, a burst becomes one trailing delivery, keys are apart', async (t) => {
  const seen: string[] = [];
  const coalescer = new Coalescer<number>(50, (key, payload) => seen.push(`${key}:${payload}`));
  for (let i = 1; i <= 100; i += 1) coalescer.push('tools', i);
  coalescer.push('prompts', 7);
  t.same(seen, ['tools:1', 'prompts:7']);
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.same(seen, ['tools:1', 'prompts:7', 'tools:100'], 'one trailing delivery with the latest payload');
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.equal(seen.length, 3, 'nothing more without new pushes');
  coalescer.push('tools', 200);
  coalescer.push('tools', 201);
  coalescer.clear();
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.same(seen.at(-1), 'tools:200', 'clear drops the pending trailing delivery');
});
