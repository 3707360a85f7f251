// How many bytes of forwarded requests are on their way to the upstreams, per
// upstream and in total. A request is cloned into its actor's 256 MB heap and
// serialised there once more, so a few maximum-size (64 MB) calls at once would
// kill that actor, and enough of them the main thread: past either cap a call
// is refused at once with UPSTREAM_BUSY instead. The actor bounds the answers
// it reads (workers/actor/limits.ts).
import { JSONRPC } from '../protocol/errors.js';
import type { ForwardOutcome } from '../protocol/actor.js';

const MB = 1024 * 1024;
/** One maximum-size request and its copies fit in an actor's heap beside the answers it reads; two do not. */
export const MAX_IN_FLIGHT_PER_UPSTREAM = 96 * MB;
/** Across all upstreams: the main thread holds each request as parsed JSON while its clone is on the way. */
export const MAX_IN_FLIGHT_TOTAL = 512 * MB;
/** What an object, array or scalar costs beside its strings (punctuation, numbers). */
const NODE_CHARS = 8;

/**
 * About the size of `value` as JSON, in UTF-16 code units: its strings and
 * keys plus a little per node. Iterative, and it stops once past `stopAbove`
 * (a refused request costs no full walk).
 */
export function approximateChars(value: unknown, stopAbove: number): number {
  let total = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && total <= stopAbove) {
    const node = pending.pop();
    total += NODE_CHARS;
    if (typeof node === 'string') total += node.length;
    else if (typeof node === 'object' && node !== null) {
      if (Array.isArray(node)) for (const child of node) pending.push(child);
      else
        for (const [key, child] of Object.entries(node)) {
          total += key.length;
          pending.push(child);
        }
    }
  }
  return total;
}

export class InFlightLedger {
  private total = 0;
  private readonly byUpstream = new Map<string, number>();
  private readonly callsByUpstream = new Map<string, number>();

  constructor(
    private readonly perUpstream = MAX_IN_FLIGHT_PER_UPSTREAM,
    private readonly overall = MAX_IN_FLIGHT_TOTAL,
  ) {}

  /** Takes `chars` for `server`, or answers why not (the call is then refused). A request alone past the cap always is. */
  take(server: string, chars: number): string | null {
    const mine = this.byUpstream.get(server) ?? 0;
    if (mine + chars > this.perUpstream) return `${Math.round((mine + chars) / MB)} MB would be in flight to ${server} (at most ${this.perUpstream / MB} MB)`;
    if (this.total + chars > this.overall) return `${Math.round((this.total + chars) / MB)} MB would be in flight to the upstreams (at most ${this.overall / MB} MB)`;
    this.byUpstream.set(server, mine + chars);
    this.callsByUpstream.set(server, (this.callsByUpstream.get(server) ?? 0) + 1);
    this.total += chars;
    return null;
  }

  give(server: string, chars: number): void {
    const left = (this.byUpstream.get(server) ?? 0) - chars;
    if (left > 0) this.byUpstream.set(server, left);
    else this.byUpstream.delete(server);
    const calls = (this.callsByUpstream.get(server) ?? 0) - 1;
    if (calls > 0) this.callsByUpstream.set(server, calls);
    else this.callsByUpstream.delete(server);
    this.total -= chars;
  }

  /** Calls in flight to one upstream (each took its bytes once). */
  calls(server: string): number {
    return this.callsByUpstream.get(server) ?? 0;
  }

  /** Bytes in flight, for one upstream or in total. */
  inFlight(server?: string): number {
    return server === undefined ? this.total : (this.byUpstream.get(server) ?? 0);
  }
}

/** The refusal a caller gets when the ledger is full. */
export function busyForward(server: string, reason: string): ForwardOutcome {
  const message = `${server}: call refused, too much in flight: ${reason}; retry when earlier calls have finished`;
  return { ok: false, error: { code: JSONRPC.UPSTREAM_BUSY, message, data: { code: 'UPSTREAM_BUSY', server } } };
}

/** One ledger for the whole process: the total cap is across every actor. */
export const inFlight = new InFlightLedger();
