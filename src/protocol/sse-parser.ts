// text/event-stream, as the WHATWG "server-sent events" parser reads it: lines
// end with CRLF, LF or CR (a CR ending a chunk ends its line at once), a
// leading BOM is skipped, a line without a colon is a field with an empty
// value, comments are dropped as they are read. The last event id is taken at
// each blank line, whether or not its event has data, and a retry: as soon as
// it is read: both are handed on as they change, for the stream's
// reconnection. Around that, coffer's caps: an event whose unfinished line and
// data pass the first is dropped and counted, and the stream goes on with the
// next event; an id longer than the second is kept as its length only, as
// one that long is of no use to reconnect with. Events come back per chunk; it
// says when it holds nothing (between events, keep-alive comments aside), for
// the answer budget. Pure: no I/O.
import { MAX_MESSAGE_CHARS } from './message-limit.js';

export interface SseEvent {
  /** The `event:` field; "message" when the server sent none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
}

/** An event id as the parser keeps it: the id, or only the length of one longer than it keeps. */
export type EventId = string | { readonly chars: number };

/** What the stream says about reconnecting to it. */
export interface SseHooks {
  /** Each valid `retry:` value (milliseconds), when its line is read. */
  onRetry?: (ms: number) => void;
  /** The stream's last event id, each time a blank line changes it (empty: an `id:` without a value cleared it). */
  onLastEventId?: (id: EventId) => void;
}

const CR = 13;
const LF = 10;
const COLON = 58;
const SPACE = 32;
const LINE_END = /[\r\n]/g;
const DIGITS = /^\d+$/;

export class SseParser {
  private events: SseEvent[] = [];
  private started = false;
  /** A "\r" ended the previous chunk (fed as CRLF): a "\n" starting the next one belongs to it. */
  private pendingCr = false;
  /** The unfinished line's pieces, and their length. */
  private partial: string[] = [];
  private partialChars = 0;
  /** The next character starts a line. */
  private atLineStart = true;
  /** A field came since the last blank line: the parser holds (or may hold) an event. */
  private inEvent = false;
  private data: string[] = [];
  /** The data lines' length joined, line feeds included. */
  private dataChars = 0;
  private eventType = '';
  /** The last `id:` field read; it becomes the last event id at the next blank line. */
  private idBuffer: EventId | undefined;
  private lastId: EventId | undefined;
  /** The event being read grew past maxChars: its rest is skipped up to its blank line. */
  private skip = false;
  /** Events dropped for their size, so the transport can report them. */
  dropped = 0;

  constructor(
    private readonly maxChars = MAX_MESSAGE_CHARS,
    private readonly hooks: SseHooks = {},
    /** The longest id kept as it is; the buffer lives as long as the stream. */
    private readonly maxIdChars = maxChars,
  ) {}

  /** The rest of a dropped event is being skipped: nothing is buffered. */
  get skipping(): boolean {
    return this.skip;
  }

  /**
   * The parser holds no partial line and no event: the text so far ended with a
   * blank line, or with comment lines (keep-alives) after one.
   */
  get betweenEvents(): boolean {
    return !this.skip && this.atLineStart && !this.inEvent;
  }

  /** Parses one chunk of text; returns the events it completed (possibly none). */
  push(chunk: string): SseEvent[] {
    if (!this.started) {
      if (chunk.length === 0) return [];
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.charCodeAt(0) === LF) chunk = chunk.slice(1);
    this.pendingCr = chunk.charCodeAt(chunk.length - 1) === CR;
    let i = 0;
    while (i < chunk.length) {
      LINE_END.lastIndex = i;
      const found = LINE_END.exec(chunk);
      if (!found) {
        this.keepPartial(chunk.slice(i));
        break;
      }
      const end = found.index;
      if (this.skip) this.skipLine(end === i);
      else this.line(this.partial.length === 0 ? chunk.slice(i, end) : this.takePartial(chunk.slice(i, end)));
      i = end + (chunk.charCodeAt(end) === CR && chunk.charCodeAt(end + 1) === LF ? 2 : 1);
      this.atLineStart = true;
    }
    const events = this.events;
    this.events = [];
    return events;
  }

  /** A line of a dropped event: its blank line ends the skip. */
  private skipLine(empty: boolean): void {
    if (!(empty && this.atLineStart)) return;
    this.skip = false;
    this.inEvent = false;
  }

  private keepPartial(piece: string): void {
    this.atLineStart = false;
    if (this.skip) return;
    if (this.partial.length === 0 && piece.charCodeAt(0) !== COLON) this.inEvent = true;
    this.partial.push(piece);
    this.partialChars += piece.length;
    if (this.partialChars + this.dataChars > this.maxChars) this.drop();
  }

  private takePartial(rest: string): string {
    this.partial.push(rest);
    const line = this.partial.join('');
    this.partial = [];
    this.partialChars = 0;
    return line;
  }

  private line(line: string): void {
    if (line.length === 0) return this.dispatch();
    if (line.charCodeAt(0) === COLON) return;
    this.inEvent = true;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1);
    switch (field) {
      case 'data':
        this.dataChars += (this.data.length > 0 ? 1 : 0) + value.length;
        this.data.push(value);
        if (this.dataChars > this.maxChars) this.drop();
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value.length > this.maxIdChars ? { chars: value.length } : value;
        break;
      case 'retry':
        if (DIGITS.test(value)) this.hooks.onRetry?.(Number(value));
        break;
      default: // unknown fields are ignored
    }
  }

  private dispatch(): void {
    if (this.idBuffer !== undefined && this.idBuffer !== this.lastId) {
      this.lastId = this.idBuffer;
      this.hooks.onLastEventId?.(this.lastId);
    }
    if (this.data.length > 0) this.events.push({ event: this.eventType || 'message', data: this.data.join('\n') });
    this.resetEvent();
  }

  /** The event passed the cap: what it holds goes, and its rest is skipped. */
  private drop(): void {
    this.dropped += 1;
    this.skip = true;
    this.partial = [];
    this.partialChars = 0;
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.dataChars = 0;
    this.eventType = '';
    this.inEvent = false;
  }
}
