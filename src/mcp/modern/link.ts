// How the router reaches a modern caller: there is no session, so each
// exchange (and each open subscriptions/listen) gets an id of its own, under
// a prefix the legacy session ids (UUIDs) never have. Notifications for it
// go to its stream; upstream requests for a modern caller (sampling,
// elicitation, roots during a call) are refused until coffer bridges them as
// input_required results.
import type { ForwardOutcome } from '../../protocol/actor.js';
import { JSONRPC } from '../../protocol/errors.js';
import type { ClientLink } from '../../router/client-messages.js';

export const MODERN_CALLER_PREFIX = 'modern:';

/** Where the messages for one modern caller id go. */
export interface ModernTarget {
  notify(method: string, params: Record<string, unknown>): void;
}

export class EraClientLink implements ClientLink {
  constructor(
    private readonly legacy: ClientLink,
    private readonly modern: (id: string) => ModernTarget | undefined,
  ) {}

  request(session: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<ForwardOutcome> {
    if (!session.startsWith(MODERN_CALLER_PREFIX)) return this.legacy.request(session, relatedRequestId, method, params, signal);
    return Promise.resolve({
      ok: false,
      error: {
        code: JSONRPC.METHOD_NOT_FOUND,
        message: `Method not found: the caller speaks MCP 2026-07-28, and coffer does not yet relay ${method} to such a caller (it would be an input_required result); call from a 2025-11-25 session to use it`,
        data: { code: 'BAD_REQUEST' },
      },
    });
  }

  notify(session: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>): void {
    if (!session.startsWith(MODERN_CALLER_PREFIX)) return this.legacy.notify(session, relatedRequestId, method, params);
    this.modern(session)?.notify(method, params);
  }
}
