// Thin adapter between uWebSockets.js and what answers a request: an
// HttpReply written straight to the socket (the /mcp hot path) or a Fetch
// Response (the SDK transport's own answers: GET streams, DELETE, errors).
// uWS rules honoured here: request data is read before any await, every
// handler sets onAborted, and writes after an await are corked (one cork =
// one send(2), so a final SSE event and the stream's end leave together).
import { STATUS_CODES } from 'node:http';
import { mediaTypeEssence } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { HttpReply } from './reply.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** What a handler needs of a request, copied out of uWS before any await. */
export interface IncomingRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
}

export function readRequest(req: HttpRequest): IncomingRequest {
  const headers: Record<string, string> = {};
  // A repeated header is one value joined with ", ", as Fetch and node:http read it: a check of the first can never be passed by the last.
  req.forEach((key, value) => {
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  });
  return { method: req.getCaseSensitiveMethod().toUpperCase(), path: req.getUrl(), query: req.getQuery() ?? '', headers };
}

/** Tracks whether the client went away; uWS forbids touching `res` after that. */
export class ResponseState {
  aborted = false;
  private onAbortHandlers: Array<() => void> = [];

  constructor(readonly res: HttpResponse) {
    res.onAborted(() => {
      this.aborted = true;
      for (const handler of this.onAbortHandlers) handler();
    });
  }

  onAbort(handler: () => void): void {
    this.onAbortHandlers.push(handler);
  }
}

export class BodyTooLargeError extends Error {}

/** Collects the body; rejects with BodyTooLargeError past `limit` bytes (the rest is not buffered). */
export function readBody(state: ResponseState, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    state.onAbort(() => reject(new Error('client aborted')));
    state.res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(new BodyTooLargeError(`body over ${limit} bytes`));
        return;
      }
      // uWS reuses the chunk's memory after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
}

export function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
}

/** Status line and headers; call inside a cork. */
function writeHead(res: HttpResponse, status: number, headers: Record<string, string>): void {
  res.writeStatus(statusLine(status));
  for (const [key, value] of Object.entries(headers)) res.writeHeader(key, value);
}

/** Writes a complete response in one corked batch. */
export function sendBuffered(state: ResponseState, status: number, headers: Record<string, string>, body: string | Uint8Array): void {
  if (state.aborted) return;
  state.res.cork(() => {
    writeHead(state.res, status, headers);
    state.res.end(body);
  });
}

/** An HttpReply written to uWS directly: no Fetch Response or ReadableStream in between. */
export class UwsReply implements HttpReply {
  constructor(private readonly state: ResponseState) {}

  get aborted(): boolean {
    return this.state.aborted;
  }

  onAbort(handler: () => void): void {
    this.state.onAbort(handler);
  }

  send(status: number, headers: Record<string, string>, body: string): void {
    sendBuffered(this.state, status, headers, body);
  }

  startStream(status: number, headers: Record<string, string>, chunk: string): void {
    if (this.state.aborted) return;
    const res = this.state.res;
    res.cork(() => {
      writeHead(res, status, headers);
      res.write(chunk);
    });
  }

  /** Backpressure is left to uWS's own buffer: SSE events of one request are few and small. */
  write(chunk: string, last: boolean): void {
    if (this.state.aborted) return;
    const res = this.state.res;
    res.cork(() => (last ? res.end(chunk) : res.write(chunk)));
  }

  fetch(response: Response): Promise<void> {
    return sendFetchResponse(this.state, response);
  }
}

/** Method, URL and headers only: callers keep the body bytes they already read. */
export function toFetchRequest(incoming: IncomingRequest, origin: string): Request {
  const url = origin + incoming.path + (incoming.query ? `?${incoming.query}` : '');
  return new Request(url, { method: incoming.method, headers: incoming.headers });
}

// uWS computes these itself.
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

function waitWritable(state: ResponseState): Promise<void> {
  return new Promise((resolve) => {
    if (state.aborted) return resolve();
    state.onAbort(resolve);
    state.res.onWritable(() => {
      resolve();
      return true;
    });
  });
}

/**
 * Sends a Fetch Response. Event streams are pumped chunk by chunk with
 * backpressure (we wait for onWritable before reading more); other bodies are
 * sent in one write. A client abort cancels the body stream, which tells the
 * producer (the SDK transport) that the stream is gone.
 */
export async function sendFetchResponse(state: ResponseState, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    if (!HOP_HEADERS.has(key)) headers[key] = value;
  });
  const streaming = response.body !== null && mediaTypeEssence(response.headers.get('content-type')) === 'text/event-stream';
  if (!streaming) {
    const body = response.body === null ? new Uint8Array() : new Uint8Array(await response.arrayBuffer());
    sendBuffered(state, response.status, headers, body);
    return;
  }
  const reader = response.body!.getReader();
  state.onAbort(() => void reader.cancel().catch(() => undefined));
  if (state.aborted) return void (await reader.cancel().catch(() => undefined));
  state.res.cork(() => writeHead(state.res, response.status, headers));
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch {
      break;
    }
    if (state.aborted) return;
    if (next.done) break;
    let writable = true;
    state.res.cork(() => {
      writable = state.res.write(next.value);
    });
    if (!writable) await waitWritable(state);
    if (state.aborted) return;
  }
  if (!state.aborted) state.res.cork(() => state.res.end());
}
