// The SDK's OAuth code, loaded on first use. With its zod schemas and jose it
// is most of the actor's code, a large share of every worker's start-up CPU
// and RSS, and most upstreams never answer a challenge nor hold a token to
// refresh. The actor bundle keeps these dynamic imports as a chunk of its own
// (scripts/build-actor.mjs; docs/performance.md).
import type { ActorLog } from '../log.js';

type AuthModule = typeof import('@modelcontextprotocol/sdk/client/auth.js');
type ExtensionsModule = typeof import('@modelcontextprotocol/sdk/client/auth-extensions.js');

let auth: Promise<AuthModule> | undefined;
let extensions: Promise<ExtensionsModule> | undefined;

/** auth(), discovery and the WWW-Authenticate parser; the log says when an actor takes on their weight. */
export function authSdk(log: ActorLog): Promise<AuthModule> {
  if (!auth) log.note('loading the sign-in code (a challenge, a refresh or a sign-in needs it)');
  return (auth ??= import('@modelcontextprotocol/sdk/client/auth.js'));
}

/** private_key_jwt client authentication (jose). */
export function authExtensions(): Promise<ExtensionsModule> {
  return (extensions ??= import('@modelcontextprotocol/sdk/client/auth-extensions.js'));
}
