// What the shim owes and is owed across links: the client's requests not yet
// answered (with how far each got, which decides whether a lost link may
// resend it) and the daemon's requests to the client, each tied to the link
// generation that asked, since only that session can use the answer.
import type { JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** queued: waiting for a link · sending: POST under way · sent: accepted, answer awaited. */
export interface Pending {
  request: JSONRPCRequest;
  phase: 'queued' | 'sending' | 'sent';
  /** The link generation it was last sent on; 0 before that. */
  generation: number;
  /** How often a link to one daemon (its identity) was lost while it ran; a restart explains the losses before it. */
  losses?: { daemon: string; times: number };
  deadline?: NodeJS.Timeout;
  /** Set for a 2026-07-28-era request (its revision; POSTed on its own), unset for one of the 2025 session. */
  modern?: { revision: string | undefined; abort?: AbortController };
}

/** Requests without side effects: sent again when the daemon vanished while they ran. */
const SAFE_TO_RESEND = new Set([
  'initialize',
  'ping',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  'subscriptions/listen',
]);

/** A request lost this often on one daemon fails instead: a daemon that keeps ending it without an answer is not restarting, it fails on it. */
const MAX_LOSSES = 3;

/** Counts a lost link to `daemon` under `entry`: true when it may be sent again (no side effects, and not lost too often there). */
export function mayResend(entry: Pending, daemon: string): boolean {
  if (entry.losses?.daemon !== daemon) entry.losses = { daemon, times: 0 };
  entry.losses.times += 1;
  return SAFE_TO_RESEND.has(entry.request.method) && entry.losses.times < MAX_LOSSES;
}

export class RequestLedger {
  private readonly pending = new Map<RequestId, Pending>();
  /** Daemon→client requests awaiting the client's answer, with the link generation that asked. */
  private readonly serverRequests = new Map<RequestId, number>();

  track(request: JSONRPCRequest, modern?: Pending['modern']): void {
    this.pending.set(request.id, { request, phase: 'queued', generation: 0, ...(modern && { modern }) });
  }

  get(id: RequestId): Pending | undefined {
    return this.pending.get(id);
  }

  /** False once the entry was answered or failed (a later request may reuse its id). */
  isOpen(entry: Pending): boolean {
    return this.pending.get(entry.request.id) === entry;
  }

  /** A snapshot: settling entries while walking it is safe. */
  entries(): Pending[] {
    return [...this.pending.values()];
  }

  settle(entry: Pending): void {
    clearTimeout(entry.deadline);
    this.pending.delete(entry.request.id);
  }

  arm(entry: Pending, ms: number, expired: () => void): void {
    entry.deadline = setTimeout(expired, ms);
  }

  /** The shim is closing: no timer fires and no modern POST stays open. */
  close(): void {
    for (const entry of this.pending.values()) {
      clearTimeout(entry.deadline);
      entry.modern?.abort?.abort();
    }
  }

  serverAsked(id: RequestId, generation: number): void {
    this.serverRequests.set(id, generation);
  }

  /** The daemon gave up its request `id` (asked on link `generation`): no answer of the client's is owed to it any more. */
  serverCancelled(id: RequestId, generation: number): void {
    if (this.serverRequests.get(id) === generation) this.serverRequests.delete(id);
  }

  /** The generation of the link that asked `id`, forgotten once taken. */
  takeAsker(id: RequestId): number | undefined {
    const asker = this.serverRequests.get(id);
    this.serverRequests.delete(id);
    return asker;
  }

  /** A link is gone: its requests can no longer be answered. */
  forgetGeneration(generation: number): void {
    for (const [id, asker] of this.serverRequests) if (asker === generation) this.serverRequests.delete(id);
  }
}
