// How the router reaches a client session: upstream requests (sampling,
// elicitation, roots) are re-sent with an id of coffer's on the stream of the
// call that caused them, only if the client declared the capability; the
// client's answer comes back as a POSTed response and settles the request.
import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ForwardOutcome } from '../protocol/actor.js';
import { requiredCapability } from '../protocol/client-requests.js';
import { JSONRPC, messageOf } from '../protocol/errors.js';
import type { Logger } from '../log.js';
import type { ClientLink } from '../router/client-messages.js';
import type { ClientAnswer, McpSession } from './session.js';
import type { CancelSignal } from '../protocol/cancel.js';


export class SessionClientLink implements ClientLink {
  constructor(
    private readonly sessionOf: (id: string) => McpSession | undefined,
    private readonly log: Logger,
  ) {}

  request(sessionId: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>, signal: CancelSignal): Promise<ForwardOutcome> {
    const session = this.sessionOf(sessionId);
    if (!session) return Promise.resolve(failure(JSONRPC.INTERNAL_ERROR, `the client session that caused ${method} has closed`));
    // Only the methods of requiredCapability() get here: the actor answers any other -32601 itself.
    const capability = requiredCapability(method);
    if (capability !== undefined && session.clientCapabilities[capability] === undefined) {
      return Promise.resolve(failure(JSONRPC.METHOD_NOT_FOUND, `Method not found: the client did not declare the ${capability} capability`));
    }
    // Unguessable: an answer is only taken from the session it was sent to, and an id tells nothing about other sessions' requests.
    const id = `coffer-${randomUUID()}`;
    const outgoing = (session.outgoing ??= new Map());
    const options = relatedRequestId === undefined ? undefined : { relatedRequestId };
    return new Promise<ForwardOutcome>((resolve) => {
      const settle = (outcome: ForwardOutcome): void => {
        if (!outgoing.delete(id)) return;
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = (): void => {
        settle(failure(JSONRPC.INTERNAL_ERROR, 'cancelled by the server'));
        this.send(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(signal.reason ?? 'cancelled by the server') } }, options);
      };
      outgoing.set(id, (answer: ClientAnswer) => settle('result' in answer ? { ok: true, result: answer.result } : { ok: false, error: answer.error }));
      signal.addEventListener('abort', onAbort, { once: true });
      session.transport
        .send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage, options)
        .catch((error: unknown) => settle(failure(JSONRPC.INTERNAL_ERROR, `could not reach the client for ${method}: ${messageOf(error)}`)));
    });
  }

  notify(sessionId: string, relatedRequestId: string | number | undefined, method: string, params: Record<string, unknown>): void {
    const session = this.sessionOf(sessionId);
    if (session) this.send(session, { jsonrpc: '2.0', method, params }, relatedRequestId === undefined ? undefined : { relatedRequestId });
  }

  private send(session: McpSession, message: JSONRPCMessage, options: { relatedRequestId: string | number } | undefined): void {
    session.transport.send(message, options).catch((error: unknown) => this.log.debug('message to client not delivered', { session: session.tag, error: String(error) }));
  }
}

/** A client's answer to one of coffer's requests; false if it answers nothing coffer asked. */
export function acceptClientAnswer(session: McpSession, message: JSONRPCMessage): boolean {
  const id = (message as { id?: unknown }).id;
  const settle = typeof id === 'string' ? session.outgoing?.get(id) : undefined;
  if (!settle) return false;
  if ('error' in message) settle({ error: message.error as Extract<ClientAnswer, { error: unknown }>['error'] });
  else settle({ result: ((message as { result?: Record<string, unknown> }).result ?? {}) });
  return true;
}

/** The session closed: nobody will answer its pending requests. */
export function abandonClientRequests(session: McpSession): void {
  for (const settle of [...(session.outgoing?.values() ?? [])]) settle({ error: { code: JSONRPC.INTERNAL_ERROR, message: 'the client session closed' } });
}

function failure(code: number, message: string): ForwardOutcome {
  return { ok: false, error: { code, message } };
}
