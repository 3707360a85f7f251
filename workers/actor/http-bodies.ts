// Reading an HTTP upstream's bodies: whole JSON answers and SSE streams under
// the actor's answer budget, error bodies cut short, JSON-RPC text parsed with
// the nesting policy. Shared by both network transports.
import type { Http1Response } from './http1.js';
import type { JsonRpcId, JsonRpcMessage } from './jsonrpc-session.js';
import { MAX_ERROR_TEXT_CHARS, sanitiseText } from '../../src/protocol/untrusted-text.js';
import { parseInbound } from './inbound.js';
import { MAX_MESSAGE_CHARS } from '../../src/protocol/message-limit.js';
import { AnswerBudget, MAX_ANSWER_CHARS_IN_FLIGHT, MessageTooLargeError } from './limits.js';
import { mediaTypeEssence } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { RpcError } from './jsonrpc-session.js';
import { JSONRPC } from '../../src/protocol/errors.js';
import { SseParser, type SseEvent, type SseHooks } from '../../src/protocol/sse-parser.js';
import { MAX_EVENT_ID_CHARS } from './last-event-id.js';

/** The media type an answer names, without its parameters and in lower case (RFC 9110: case-insensitive); '' when none. */
export function mediaType(res: Http1Response): string {
  const header = res.headers['content-type'];
  return mediaTypeEssence(typeof header === 'string' ? header : undefined) ?? '';
}

export function isRequest(message: JsonRpcMessage): boolean {
  return typeof message.method === 'string' && 'id' in message;
}

/** One per actor: every answer body (JSON, or the event being read on an SSE stream) counts against it. */
const answers = new AnswerBudget();

/** An answer cut off because the actor already holds as much answer text as it may. */
export class AnswerBudgetError extends RpcError {
  constructor() {
    const message = `the upstream's answers in flight passed ${MAX_ANSWER_CHARS_IN_FLIGHT / (1024 * 1024)} MB: this one was cut off; retry when earlier calls have finished`;
    super(JSONRPC.UPSTREAM_BUSY, message, { code: 'UPSTREAM_BUSY' });
  }
}

/** A body coffer cannot read: compressed, though coffer sends no Accept-Encoding (so it asks for none). */
export class UnreadEncodingError extends Error {
  constructor(encoding: string) {
    super(`the upstream answered with Content-Encoding ${sanitiseText(encoding, 64)}, which coffer did not ask for and does not read: turn compression off for it (or in the proxy before it)`);
    this.name = 'UnreadEncodingError';
  }
}

/**
 * Why a body cannot be read, if it is compressed: read as text it would be no
 * JSON and no event, and a stream would stay open saying nothing. Such a
 * response is destroyed before a byte of it is read.
 */
function unreadable(res: Http1Response): UnreadEncodingError | undefined {
  const encoding = res.headers['content-encoding'];
  if (encoding === undefined || encoding.split(',').every((coding) => ['', 'identity'].includes(coding.trim().toLowerCase()))) return undefined;
  res.destroy();
  return new UnreadEncodingError(encoding);
}

/**
 * Reads a whole body; rejects when it is compressed (UnreadEncodingError),
 * breaks off, grows past MAX_MESSAGE_CHARS or would take the actor's answers
 * past their budget (the response is then destroyed). The body's share of the
 * budget is held until its answer has left.
 */
export async function readText<T>(res: Http1Response, use: (text: string) => T): Promise<T> {
  const refused = unreadable(res);
  if (refused) throw refused;
  let chars = 0;
  try {
    const text = await new Promise<string>((resolve, reject) => {
      const parts: string[] = [];
      const fail = (error: Error): void => {
        // Nothing of this body will be used: its share goes back now, for the answers still being read.
        answers.give(chars);
        chars = 0;
        res.destroy();
        reject(error);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!answers.take(chunk.length)) return fail(new AnswerBudgetError());
        parts.push(chunk);
        chars += chunk.length;
        if (chars > MAX_MESSAGE_CHARS) fail(new MessageTooLargeError('HTTP body'));
      });
      res.on('end', () => resolve(parts.join('')));
      res.on('error', (error) => reject(error));
      res.on('close', () => (res.complete ? resolve(parts.join('')) : reject(new Error('response ended before it was complete'))));
    });
    return use(text);
  } finally {
    // `use` delivers the answer; the chain that posts it to the main thread runs in microtasks after it. Until
    // then the parsed answer is alive, so its share is given back only on the next turn of the event loop.
    setImmediate(() => answers.give(chars));
  }
}

/**
 * The start of an error answer's body, for its message, made safe to log: the
 * rest is not read (an upstream's 3 MB error page would otherwise be carried
 * into every error, log line and event); a compressed one is not read at all,
 * and says so. Never fails.
 */
export function errorText(res: Http1Response): Promise<string> {
  const refused = unreadable(res);
  if (refused) return Promise.resolve(refused.message);
  return new Promise((resolve) => {
    let text = '';
    const done = (): void => resolve(sanitiseText(text));
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.length <= MAX_ERROR_TEXT_CHARS) return;
      res.destroy();
      resolve(`${sanitiseText(text.slice(0, MAX_ERROR_TEXT_CHARS), MAX_ERROR_TEXT_CHARS)}… [rest of the body not read]`);
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
  });
}

/** What else an SSE stream may say besides its events; `budget` is the actor's unless a test gives its own. */
export interface SseOptions extends SseHooks {
  budget?: AnswerBudget;
  /** The body can be read (it is not compressed): called before its first byte is. */
  onReadable?: () => void;
}

/**
 * Reads an SSE body to its end: resolves when it ends cleanly, rejects when it
 * is compressed (UnreadEncodingError), breaks off or when the event being read
 * would take the actor's answers past their budget (AnswerBudgetError; the
 * response is destroyed). An event's share is held until it has been delivered.
 */
export function readSse(res: Http1Response, onEvent: (event: SseEvent) => void, onDropped: (error: Error) => void, { budget = answers, onReadable, ...hooks }: SseOptions = {}): Promise<void> {
  const refused = unreadable(res);
  if (refused) return Promise.reject(refused);
  onReadable?.();
  return new Promise((resolve, reject) => {
    // An id longer than can be sent back is of no use: only its length is kept, to say why a resumption cannot be.
    const parser = new SseParser(MAX_MESSAGE_CHARS, hooks, MAX_EVENT_ID_CHARS);
    // Taken from the budget since the last event ended: the parser never holds more.
    let held = 0;
    /** `delivered`: events went out from these chars, alive until the next turn; otherwise they go back now. */
    const release = (keep: number, delivered = true): void => {
      const chars = held - keep;
      held = keep;
      if (chars <= 0) return;
      if (delivered) setImmediate(() => budget.give(chars));
      else budget.give(chars);
    };
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (!budget.take(chunk.length)) {
        // Only the parser held these (every event before them was delivered): they go back now, not on the next
        // turn, or streams refused in the same turn would all be cut before any share came back.
        budget.give(held);
        held = 0;
        res.destroy();
        reject(new AnswerBudgetError());
        return;
      }
      held += chunk.length;
      const dropped = parser.dropped;
      const events = parser.push(chunk);
      for (const event of events) onEvent(event);
      if (parser.dropped !== dropped) onDropped(new MessageTooLargeError('SSE event'));
      // Past an event's end the parser holds at most the rest of this chunk; while it skips a dropped event, or
      // between events (keep-alive comments are dropped as read), nothing.
      if (parser.skipping || parser.betweenEvents) release(0, events.length > 0);
      else if (events.length > 0) release(chunk.length);
    });
    res.on('end', () => {
      release(0);
      resolve();
    });
    res.on('error', (error) => {
      release(0);
      reject(error);
    });
    res.on('close', () => {
      release(0);
      if (res.complete) resolve();
      else reject(new Error('stream ended before it was complete'));
    });
  });
}

/** The JSON-RPC error a 2026-07-28-era server answers with a 4xx (e.g. -32022, -32020), if the body is one for `id`. */
export function rpcErrorFor(text: string, id: JsonRpcId | undefined): JsonRpcMessage | undefined {
  try {
    const message = JSON.parse(text) as JsonRpcMessage;
    const matches = id !== undefined && (message.id === id || message.id === null);
    return matches && typeof message.error === 'object' && message.error !== null ? { ...message, id } : undefined;
  } catch {
    return undefined;
  }
}

export function parseMessages(text: string): JsonRpcMessage[] {
  const data = parseInbound(text);
  return (Array.isArray(data) ? data : [data]) as JsonRpcMessage[];
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

