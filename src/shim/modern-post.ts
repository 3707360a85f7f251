// One 2026-07-28-era request from the shim's client to the daemon's /mcp: a
// POST of its own (that era has no session), with the standard headers built
// from the body, whose answer (one JSON body, or an SSE stream carrying the
// request's progress and log messages before its result, or a
// subscriptions/listen stream held open) is handed on message by message.
// Failures are thrown as the legacy transport throws them, so the relay judges
// both eras' failed sends alike (relay-answers.ts).
import { mediaTypeEssence } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { JSONRPCMessageSchema, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { HeaderParam } from '../protocol/mcp-param-headers.js';
import { modernHeaders } from '../protocol/modern-envelope.js';
import { SseParser } from '../protocol/sse-parser.js';
import type { DaemonEndpoint } from './link-lifecycle.js';
import { UnreadableAnswer } from './relay-answers.js';

/** Statuses that are not the daemon's answer to the request: a rotated token (401) and a daemon starting or stopping (503). */
const NOT_AN_ANSWER = new Set([401, 503]);

/** The x-mcp-header arguments of a tool, as the tools/list answers the shim relayed declared them. */
export type HeaderParamsOf = (tool: string) => readonly HeaderParam[];

function headersFor(request: JSONRPCRequest, revision: string | undefined, token: string, headerParams: HeaderParamsOf): Record<string, string> {
  return {
    // A stdio client has no headers to send: the shim mirrors the arguments the daemon checks, as an HTTP client would.
    ...(modernHeaders(request, headerParams) as Record<string, string>),
    // The client's own revision, so an unserved one is refused as such (-32022), not as a header mismatch.
    ...(revision !== undefined && { 'mcp-protocol-version': revision }),
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
}

/** The JSON-RPC error an HTTP error status carries for this request, if its body is one. */
function errorAnswer(text: string, request: JSONRPCRequest): JSONRPCMessage | undefined {
  try {
    const body = JSON.parse(text) as { id?: unknown; error?: unknown };
    return (body.id === request.id || body.id === null) && typeof body.error === 'object' && body.error !== null ? ({ ...body, id: request.id } as JSONRPCMessage) : undefined;
  } catch {
    return undefined;
  }
}

/** One message of the answer, passed on unchanged once the SDK's schema takes it: what is not JSON-RPC never reaches the client's stdout. */
function messageOf(text: string): JSONRPCMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UnreadableAnswer('not JSON');
  }
  if (!JSONRPCMessageSchema.safeParse(value).success) throw new UnreadableAnswer('not a JSON-RPC message');
  return value as JSONRPCMessage;
}

async function readEvents(body: ReadableStream<Uint8Array>, onMessage: (message: JSONRPCMessage) => void): Promise<void> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
      if (event.data !== '') onMessage(messageOf(event.data));
    }
  }
}

/**
 * Posts `request` and hands each message of the answer to `onMessage`;
 * resolves when the answer has ended (or `signal` aborted it: the daemon
 * then cancels the request), throws when it could not be had.
 */
export async function postModern(
  endpoint: DaemonEndpoint,
  request: JSONRPCRequest,
  revision: string | undefined,
  headerParams: HeaderParamsOf,
  signal: AbortSignal,
  onMessage: (message: JSONRPCMessage) => void,
): Promise<void> {
  try {
    const response = await fetch(endpoint.mcpUrl, { method: 'POST', headers: headersFor(request, revision, endpoint.token, headerParams), body: JSON.stringify(request), signal });
    if (!response.ok) {
      const text = await response.text();
      const answer = NOT_AN_ANSWER.has(response.status) ? undefined : errorAnswer(text, request);
      if (!answer) throw new StreamableHTTPError(response.status, `Error POSTing to endpoint: ${text}`);
      return onMessage(answer);
    }
    if (!response.body) return;
    if (mediaTypeEssence(response.headers.get('content-type')) === 'text/event-stream') return await readEvents(response.body, onMessage);
    onMessage(messageOf(await response.text()));
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
}
