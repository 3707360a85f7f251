// Where the answer to one /mcp request goes. The daemon writes straight to
// uWS (bridge.ts: UwsReply); the session code decides what to send (one JSON
// body, or an SSE stream written piece by piece), not how.

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
