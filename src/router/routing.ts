// The routing core, assembled: merged lists, routed calls, session features
// and the upstreams' messages for clients, subscribed to the actor pool here
// so that no caller can forget a path. In particular the pool's list_changed
// drops the router's copy (R3) before anyone else hears it: the sessions are
// told in the same turn, and a toolset's list is weighed then, so neither may
// see the old copy.
import type { InvocationRecord } from '../protocol/events.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import { Calls, type ToolsetScope } from './calls.js';
import { ClientMessages } from './client-messages.js';
import type { CapabilityGate } from './gate.js';
import type { ServerDirectory } from './namespaces.js';
import { Router } from './router.js';
import { SessionFeatures } from './session-features.js';

export interface Routing {
  router: Router;
  calls: Calls;
  features: SessionFeatures;
  clientMessages: ClientMessages;
  /** A server was added, changed, disabled (`gone`) or removed (`gone`): its lists, and when gone its subscriptions and degradation, go. */
  serverChanged(server: string, gone: boolean): void;
}

export interface RoutingOptions {
  /** The actors' list cache TTL: the router's copies expire with them. */
  cacheTtlMs: number;
  /** The longest exposed tool or prompt name; default 64. */
  nameBudget?: number;
  onInvocation(record: InvocationRecord): void;
  /** A toolset as it is now (null: the whole surface; an unknown name: an empty one); asked only once requests flow, so it may lead to toolsets set up after routing. */
  toolsetOf(name: string | null): ToolsetScope | null;
  /** Failures nobody waits for (a logging/setLevel not applied, an unsubscribe after a session ended). */
  onError(message: string, context: Record<string, unknown>): void;
}

export function createRouting(pool: UpstreamPool, gate: CapabilityGate, servers: ServerDirectory, options: RoutingOptions): Routing {
  const router = new Router(pool, gate, servers, options.cacheTtlMs, options.nameBudget);
  const calls: Calls = new Calls(pool, gate, servers, router.namespaces, router.directory, options.onInvocation, (route) => clientMessages.askOf(route));
  const features = new SessionFeatures(calls, pool, options.toolsetOf, options.onError);
  const clientMessages = new ClientMessages(pool, (id) => calls.routeOf(id), features);

  // First, whoever subscribed before: the announcer weighs toolset sessions' lists as it tells them.
  pool.prependListener('list_changed', (server, kind) => router.changed(server, kind));
  pool.on('state', (server, status) => {
    if (status.state === 'ready') router.upstreamReady(server);
  });
  pool.on('client', (event) => clientMessages.handle(event));

  const serverChanged = (server: string, gone: boolean): void => {
    if (!gone) return router.changed(server);
    router.forgetServer(server);
    features.forgetServer(server);
  };
  return { router, calls, features, clientMessages, serverChanged };
}
