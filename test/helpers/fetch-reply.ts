// /mcp of a SessionRegistry without an HTTP server: a Fetch Request in, a Fetch
// Response out (the daemon itself writes straight to uWS).
import type { HttpReply } from '../../src/http/reply.js';
import type { McpRequestHead, SessionRegistry } from '../../src/mcp/sessions.js';

/** An HttpReply that becomes a Fetch Response (`response` settles with the first thing sent). */
class FetchReply implements HttpReply {
  aborted = false;
  readonly response: Promise<Response>;
  private resolve!: (response: Response) => void;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private readonly abortHandlers: Array<() => void> = [];
  private readonly encoder = new TextEncoder();

  constructor() {
    this.response = new Promise((resolve) => (this.resolve = resolve));
  }

  onAbort(handler: () => void): void {
    this.abortHandlers.push(handler);
  }

  send(status: number, headers: Record<string, string>, body: string): void {
    this.resolve(new Response(body === '' ? null : body, { status, headers }));
  }

  startStream(status: number, headers: Record<string, string>, chunk: string): void {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      cancel: () => {
        this.aborted = true;
        for (const handler of this.abortHandlers) handler();
      },
    });
    this.resolve(new Response(stream, { status, headers }));
    this.write(chunk, false);
  }

  write(chunk: string, last: boolean): void {
    if (this.aborted || this.controller === null) return;
    if (chunk !== '') this.controller.enqueue(this.encoder.encode(chunk));
    if (last) this.controller.close();
  }

  async fetch(response: Response): Promise<void> {
    this.resolve(response);
  }
}

/** serve() in Fetch form, as one credential (the HTTP server's authentication is not in the way). */
export async function serveFetch(registry: SessionRegistry, request: Request, body: Buffer | null): Promise<Response> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => (headers[key] = value));
  const head: McpRequestHead = { method: request.method, headers, credential: { id: 'test', name: 'test' }, toolset: null, toRequest: () => request };
  const reply = new FetchReply();
  await registry.serve(head, body, reply);
  return reply.response;
}
