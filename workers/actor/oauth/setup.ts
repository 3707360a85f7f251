// Whether an upstream gets OAuth, and the answer for one that does not.
import type { ActorInit } from '../../../src/protocol/actor.js';
import { signsInWithOAuth, type OAuthOutcome } from '../../../src/protocol/oauth.js';
import type { ActorLog } from '../log.js';
import { UpstreamAuth, type UpstreamAuthHooks } from './upstream-auth.js';

/** The OAuth hook of an upstream that may sign in (signsInWithOAuth); null for the others. */
export function upstreamAuth(init: ActorInit, log: ActorLog, hooks: UpstreamAuthHooks): UpstreamAuth | null {
  const transport = init.config.transport;
  if (!signsInWithOAuth(transport)) return null;
  return new UpstreamAuth(init.config.name, transport.url, transport.oauth ?? {}, init.oauth ?? null, log, hooks);
}

export function noOAuth(server: string): OAuthOutcome {
  const message = `server ${server} does not sign in with OAuth: only http and sse servers without an Authorization header of their own do`;
  return { ok: false, error: { code: 'BAD_REQUEST', message } };
}
