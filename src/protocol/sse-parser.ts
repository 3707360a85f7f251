// text/event-stream (the WHATWG "server-sent events" format) through eventsource-parser,
// with what coffer adds around it: an event over the size cap is dropped and counted
// and the stream goes on with the next event; a CR ending a chunk ends its line at
// once; the last id carries over events; a retry: is handed on as soon as it is
// read (the spec sets the reconnection time then, whether or not its event
// dispatches); events come back per chunk; it says when it holds nothing
// (between events, keep-alive comments aside), for the answer budget. Pure: no I/O.
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { MAX_MESSAGE_CHARS } from './message-limit.js';

export interface SseEvent {
  /** The `event:` field; "message" when the server sent none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen on the stream (it carries over events), or undefined. */
  id: string | undefined;
}

const CR = 13;
const LF = 10;

/**
 * Where the skipped rest of an oversized event ends: after its blank line (two line
 * ends in a row, CRLF counting as one), which may be split across chunks.
 */
class BlankLineFinder {
  private atLineStart = false;
  private afterCr = false;

  /** Starts where a chunk stopped: its last character may have ended a line. */
  restart(previousChunk: string): void {
    const last = previousChunk.charCodeAt(previousChunk.length - 1);
    this.atLineStart = last === CR || last === LF;
    this.afterCr = last === CR;
  }

  /** The index just past the blank line in `chunk`, or -1 when it is not there yet. */
  find(chunk: string): number {
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code === LF && this.afterCr) {
        this.afterCr = false;
        continue;
      }
      if (code === CR || code === LF) {
        if (this.atLineStart) return i + 1;
        this.atLineStart = true;
        this.afterCr = code === CR;
      } else {
        this.atLineStart = false;
        this.afterCr = false;
      }
    }
    return -1;
  }
}

const COLON = 58;
const LINE_END = /[\r\n]/g;

/**
 * Follows the lines of the text fed to the parser (CRLF whole) to tell when it
 * holds nothing: no unfinished line, and no field read since the last blank
 * line. A comment line (a keep-alive) holds nothing, with or without a blank
 * line after it.
 */
class HoldTracker {
  private atLineStart = true;
  /** A field line came since the last blank line: the parser holds (or may hold) an event. */
  private inEvent = false;

  get holdsNothing(): boolean {
    return this.atLineStart && !this.inEvent;
  }

  reset(): void {
    this.atLineStart = true;
    this.inEvent = false;
  }

  feed(text: string): void {
    let i = 0;
    while (i < text.length) {
      if (this.atLineStart) {
        const code = text.charCodeAt(i);
        if (code === CR || code === LF) {
          this.inEvent = false;
          i += code === CR && text.charCodeAt(i + 1) === LF ? 2 : 1;
          continue;
        }
        this.atLineStart = false;
        if (code !== COLON) this.inEvent = true;
      }
      LINE_END.lastIndex = i;
      if (!LINE_END.exec(text)) return;
      const end = LINE_END.lastIndex - 1;
      i = end + (text.charCodeAt(end) === CR && text.charCodeAt(end + 1) === LF ? 2 : 1);
      this.atLineStart = true;
    }
  }
}

export class SseParser {
  private readonly parser: EventSourceParser;
  private events: SseEvent[] = [];
  private started = false;
  /** A "\r" ended the previous chunk (fed as CRLF): a "\n" starting the next one belongs to it. */
  private pendingCr = false;
  private lastId: string | undefined;
  /** The event being read grew past maxChars: its rest is skipped up to its blank line. */
  private skipper: BlankLineFinder | null = null;
  /** Events dropped for their size, so the transport can report them. */
  dropped = 0;
  private readonly lines = new HoldTracker();

  /** `onRetry`: each valid `retry:` value (milliseconds), when its line is read. */
  constructor(
    private readonly maxChars = MAX_MESSAGE_CHARS,
    onRetry: (ms: number) => void = () => {},
  ) {
    this.parser = createParser({
      // Counts the unfinished line and the event's data so far (joined, line feeds included): the library stops there and needs a reset.
      maxBufferSize: maxChars,
      onEvent: (message) => {
        if (message.id !== undefined) this.lastId = message.id;
        // A whole event inside one chunk is never buffered, so the cap is checked here too.
        if (message.data.length > this.maxChars) {
          this.dropped += 1;
          return;
        }
        this.events.push({ event: message.event ?? 'message', data: message.data, id: this.lastId });
      },
      onRetry,
      onError: (error) => {
        if (error.type !== 'max-buffer-size-exceeded') return; // unknown fields and bad retry values are ignored
        this.dropped += 1;
        this.skipper = new BlankLineFinder();
      },
    });
  }

  /**
   * The parser holds no partial line and no event: the text so far ended with a
   * blank line, or with comment lines (keep-alives) after one.
   */
  get betweenEvents(): boolean {
    return this.lines.holdsNothing;
  }

  /** The rest of a dropped event is being skipped: nothing is buffered. */
  get skipping(): boolean {
    return this.skipper !== null;
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
    // The library would wait for the next chunk to tell CR from CRLF: given as CRLF, the line ends now.
    let text = this.pendingCr ? `${chunk}\n` : chunk;
    if (this.skipper) {
      const end = this.skipper.find(text);
      if (end === -1) return [];
      this.skipper = null;
      this.parser.reset();
      text = text.slice(end);
      this.lines.reset();
    }
    this.lines.feed(text);
    this.parser.feed(text);
    this.skipFrom(text);
    const events = this.events;
    this.events = [];
    return events;
  }

  /** An overflow stops the library mid-event: skipping starts where the chunk it came in stopped. */
  private skipFrom(chunk: string): void {
    this.skipper?.restart(chunk);
  }
}
