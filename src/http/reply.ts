// Where the answer to one /mcp request goes. The daemon writes straight to
// uWS (bridge.ts: UwsReply); FetchReply builds a Fetch Response instead, for
// callers that speak Fetch. Either way the session code decides what to send
// (one JSON body, or an SSE stream written piece by piece), not how.

export interface HttpReply {
  /** The client went away: whatever is still sent is dropped. */
  readonly aborted: boolean;
  onAbort(handler: () => void): void;
  /** A complete answer, sent in one write. */
  send(status: number, headers: Record<string, string>, body: string): void;
  /** Starts a streamed answer with its first chunk (the headers leave with it). */
  startStream(status: number, headers: Record<string, string>, chunk: string): void;
  /** Appends to a started stream; `last` ends it in the same write. */
  write(chunk: string, last: boolean): void;
  /** Answers with a Response the SDK transport produced. */
  fetch(response: Response): Promise<void>;
}

/** An HttpReply that becomes a Fetch Response (`response` settles with the first thing sent). */
export class FetchReply implements HttpReply {
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
