// A streaming parser for text/event-stream (the WHATWG "server-sent events"
// format): feed it decoded text as it arrives, get back the complete events.
// Pure: no I/O, no timers, so it is unit-tested on its own.
import { MAX_MESSAGE_CHARS, PartialLine } from './limits.js';

export interface SseEvent {
  /** The `event:` field; "message" when the server sent none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen on the stream (it carries over events), or undefined. */
  id: string | undefined;
  /** A `retry:` field with a valid integer, when present in this event. */
  retry?: number;
}

/** A line end: CRLF, CR or LF. */
const LINE_END = /\r\n|\r|\n/g;

export class SseParser {
  private readonly partial = new PartialLine();
  /** The size of the event being read: its data lines so far. */
  private dataChars = 0;
  private started = false;
  /** A "\r" ended the previous chunk: a "\n" starting the next one belongs to it. */
  private pendingCr = false;
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;
  private retry: number | undefined;
  /** The event being read grew past maxChars: it is skipped up to its blank line. */
  private skipping = false;
  /** Events dropped for their size, so the transport can report them. */
  dropped = 0;

  constructor(private readonly maxChars = MAX_MESSAGE_CHARS) {}

  /** Parses one chunk of text; returns the events it completed (possibly none). */
  push(chunk: string): SseEvent[] {
    if (!this.started) {
      if (chunk.length === 0) return [];
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.pendingCr = false;
    const events: SseEvent[] = [];
    let start = 0;
    LINE_END.lastIndex = 0;
    for (let match = LINE_END.exec(chunk); match !== null; match = LINE_END.exec(chunk)) {
      if (match[0] === '\r' && LINE_END.lastIndex === chunk.length) this.pendingCr = true;
      // A line dropped in its middle (null) ends there: its end is not a blank line.
      const line = this.partial.end(chunk.slice(start, match.index));
      start = LINE_END.lastIndex;
      if (line === null) continue;
      const event = this.line(line);
      if (event) events.push(event);
    }
    // The line being read counts towards its event's size.
    if (start < chunk.length && this.partial.add(start === 0 ? chunk : chunk.slice(start), this.maxChars - this.dataChars)) this.skip();
    return events;
  }

  private skip(): void {
    if (!this.skipping) this.dropped += 1;
    this.skipping = true;
    this.data = [];
    this.dataChars = 0;
  }

  private line(line: string): SseEvent | null {
    if (line === '') {
      if (!this.skipping) return this.dispatch();
      this.skipping = false;
      return null;
    }
    if (this.skipping) return null;
    if (line.charCodeAt(0) === 58) return null; // ":" comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.dataChars += value.length;
        if (this.dataChars > this.maxChars) this.skip();
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const retry = this.retry;
    const type = this.eventType;
    const data = this.data;
    this.retry = undefined;
    this.eventType = '';
    this.data = [];
    this.dataChars = 0;
    if (data.length === 0) return null;
    const event: SseEvent = { event: type === '' ? 'message' : type, data: data.join('\n'), id: this.lastId };
    if (retry !== undefined) event.retry = retry;
    return event;
  }
}
