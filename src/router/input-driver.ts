// A 2026-07-28 upstream's input_required result for a caller that cannot get
// one (a 2025 session): coffer asks the caller each inputRequest as the
// server→client request it stands for, on the call's stream, then retries the
// upstream with the answers (and its requestState, byte for byte), until the
// upstream completes — as the SDK's legacy shim does for its own handlers.
import { JSONRPC } from '../protocol/errors.js';
import { RELAYED_CLIENT_REQUESTS, requiredCapability } from '../protocol/client-requests.js';
import { RpcError } from '../mcp/rpc-error.js';
import type { ClientAsk } from './client-messages.js';
import type { CancelSignal } from '../protocol/cancel.js';

/** Rounds at most (the SDK's shim allows 8). */
export const MAX_INPUT_ROUNDS = 8;
/** A round that asks nothing (requestState only) waits this long before retrying, so an upstream cannot make coffer spin. */
export const EMPTY_ROUND_PAUSE_MS = 250;

export type InputRetry = (inputResponses: Record<string, unknown>, requestState: string | undefined) => Promise<Record<string, unknown>>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One request of an upstream's inputRequests and the client capability it needs. */
export interface UpstreamInputRequest {
  key: string;
  method: string;
  params: Record<string, unknown>;
  capability: string;
}

/**
 * The inputRequests of an upstream's input_required, each a request MCP lets
 * a server make of its client (sampling, elicitation, roots); anything else
 * reaches no client, and the result is UPSTREAM_RESPONSE_INVALID.
 */
export function inputRequestsOf(result: Record<string, unknown>): UpstreamInputRequest[] {
  return Object.entries(isObject(result.inputRequests) ? result.inputRequests : {}).map(([key, request]) => {
    const method = isObject(request) && typeof request.method === 'string' ? request.method : undefined;
    const capability = method === undefined ? undefined : requiredCapability(method);
    if (!isObject(request) || method === undefined || capability === undefined) throw notRelayed(key, method);
    return { key, method, params: isObject(request.params) ? request.params : {}, capability };
  });
}

function notRelayed(key: string, method: string | undefined): RpcError {
  const what = method === undefined ? 'is not a request' : `asks ${method.slice(0, 64)}`;
  return RpcError.coffer(
    JSONRPC.UPSTREAM_RESPONSE_INVALID,
    'UPSTREAM_RESPONSE_INVALID',
    `the upstream's inputRequests.${key.slice(0, 64)} ${what}, and a server may ask its client only ${Object.keys(RELAYED_CLIENT_REQUESTS).join(', ')}: tell its maintainers`,
  );
}

/** Drives `first` (an input_required result) to the upstream's complete result. */
export async function driveInputRequired(first: Record<string, unknown>, ask: ClientAsk, retry: InputRetry, signal: CancelSignal): Promise<Record<string, unknown>> {
  let result = first;
  for (let round = 1; result.resultType === 'input_required'; round++) {
    if (round > MAX_INPUT_ROUNDS) throw new RpcError(JSONRPC.INTERNAL_ERROR, `the upstream still asked for client input after ${MAX_INPUT_ROUNDS} rounds; coffer gave the call up`);
    const requests = inputRequestsOf(result);
    const answers = await Promise.all(
      requests.map(async ({ key, method, params }) => {
        const outcome = await ask(method, params, signal);
        if (!outcome.ok) throw RpcError.from(outcome.error);
        return [key, outcome.result] as const;
      }),
    );
    if (requests.length === 0) await pause(EMPTY_ROUND_PAUSE_MS, signal);
    result = await retry(Object.fromEntries(answers), typeof result.requestState === 'string' ? result.requestState : undefined);
  }
  return result;
}

function pause(ms: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
