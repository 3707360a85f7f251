// The fetch the shim's SDK transport uses. The transport hands every request
// of a session one long-lived AbortSignal (aborted when it closes). Node 20's
// fetch adds an abort listener to a request's signal that leaves only when the
// request is garbage collected, and once a signal holds a few it sets the
// signal's warning bound back to its own: in a long session thousands wait on
// the one signal and Node prints "possible EventTarget memory leak" on the
// shim's stderr, which the host shows in its logs. So each request gets a
// signal of its own, and the session's signal holds one listener that aborts
// the requests still open: until their answer arrives, or, for an SSE answer
// (which streams for as long as its call runs), until its body has ended. A
// JSON answer's body is read at once from the local daemon; closing the
// session no longer cuts one short.
import { mediaTypeEssence } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const SSE = 'text/event-stream';
const open = new WeakMap<AbortSignal, Set<AbortController>>();

/** Requests of a session still open (diagnostics; the tests read it). */
export function openRequests(session: AbortSignal): number {
  return open.get(session)?.size ?? 0;
}

function requestsOf(session: AbortSignal): Set<AbortController> {
  let requests = open.get(session);
  if (!requests) {
    const made = new Set<AbortController>();
    session.addEventListener(
      'abort',
      () => {
        for (const request of made) request.abort(session.reason);
        made.clear();
      },
      { once: true },
    );
    open.set(session, (requests = made));
  }
  return requests;
}

export const transportFetch: FetchLike = async (url, init) => {
  const session = init?.signal;
  if (!session || session.aborted) return fetch(url, init);
  const requests = requestsOf(session);
  const own = new AbortController();
  requests.add(own);
  const settled = (): void => void requests.delete(own);
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: own.signal });
  } catch (error) {
    settled();
    throw error;
  }
  // Redirects, errors and JSON answers go as they came: their bodies are read at once, if at all (the media type read as the transport reads it).
  if (!response.ok || response.body === null || mediaTypeEssence(response.headers.get('content-type')) !== SSE) {
    settled();
    return response;
  }
  // A stream lasts as long as its call: its body passes through a stream whose end — read to the last byte, failed, or given up by its reader — is the request's.
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  response.body.pipeTo(writable).then(settled, settled);
  return new Response(readable, { status: response.status, statusText: response.statusText, headers: response.headers });
};
