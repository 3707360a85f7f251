// An HTTP answer that carried no JSON-RPC message: its status decides what it
// means (401/403: the door is shut, which says nothing about the MCP era).
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpStatusError';
  }
}
