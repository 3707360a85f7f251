// A streaming parser for text/event-stream (the WHATWG "server-sent events"
// format): feed it decoded text as it arrives, get back the complete events.
// Pure: no I/O, no timers, so it is unit-tested on its own.

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

export class SseParser {
  private buffer = '';
  private started = false;
  /** A "\r" ended the previous chunk: a "\n" starting the next one belongs to it. */
  private pendingCr = false;
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;
  private retry: number | undefined;

  /** Parses one chunk of text; returns the events it completed (possibly none). */
  push(chunk: string): SseEvent[] {
    if (!this.started) {
      if (chunk.length === 0) return [];
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.pendingCr = false;
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
      for (let i = start; i < this.buffer.length; i++) {
        const c = this.buffer.charCodeAt(i);
        if (c === 10) {
          end = i;
          next = i + 1;
          break;
        }
        if (c === 13) {
          end = i;
          if (i + 1 < this.buffer.length) next = this.buffer.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
          else {
            next = i + 1;
            this.pendingCr = true;
          }
          break;
        }
      }
      if (end === -1) break;
      const event = this.line(this.buffer.slice(start, end));
      if (event) events.push(event);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.charCodeAt(0) === 58) return null; // ":" comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
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
    if (data.length === 0) return null;
    const event: SseEvent = { event: type === '' ? 'message' : type, data: data.join('\n'), id: this.lastId };
    if (retry !== undefined) event.retry = retry;
    return event;
  }
}
