// How the router reaches a modern caller: there is no session, so each
// exchange (and each open subscriptions/listen) gets an id of its own, under
// a prefix the legacy session ids (UUIDs) never have. Notifications for it
// go to its stream. Upstream requests for a modern caller (sampling,
// elicitation, roots) travel with its call (input_required results, see
// input-bridge.ts); one that reaches the link came outside such a call and is
// refused.
import type { ForwardOutcome } from '../../protocol/actor.js';
import { JSONRPC } from '../../protocol/errors.js';
import type { ClientLink } from '../../router/client-messages.js';
import type { CancelSignal } from '../../protocol/cancel.js';

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

  request(session: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>, signal: CancelSignal): Promise<ForwardOutcome> {
    if (!session.startsWith(MODERN_CALLER_PREFIX)) return this.legacy.request(session, relatedRequestId, method, params, signal);
    return Promise.resolve({
      ok: false,
      error: {
        code: JSONRPC.METHOD_NOT_FOUND,
        message: `Method not found: the caller speaks MCP 2026-07-28, which is asked ${method} only as the input_required result of a tools/call, prompts/get or resources/read`,
        data: { code: 'BAD_REQUEST' },
      },
    });
  }

  notify(session: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>): void {
    if (!session.startsWith(MODERN_CALLER_PREFIX)) return this.legacy.notify(session, relatedRequestId, method, params);
    this.modern(session)?.notify(method, params);
  }
}
