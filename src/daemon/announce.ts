// How what happens in the gateway reaches people: a changed list goes to every
// MCP session as its notification and to the event bus (admin WebSocket);
// upstream health, lists left out, namespace collisions and invocations go to
// the daemon log and the bus. Upstream text is sanitised before it is logged.
import type { Logger } from '../log.js';
import { LIST_CHANGED_METHOD, PRIMARY_KINDS, type ListKind } from '../protocol/capabilities.js';
import type { InvocationRecord } from '../protocol/events.js';
import type { SessionTags } from '../mcp/session-tag.js';
import { sanitiseText } from '../protocol/untrusted-text.js';
import type { SessionRegistry } from '../mcp/sessions.js';
import type { Router } from '../router/router.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import type { EventBus } from './event-bus.js';
import type { InvocationLog } from './invocation-log.js';

export interface Audience {
  bus: EventBus;
  log: Logger;
  /** Every MCP session. */
  sessions: Pick<SessionRegistry, 'broadcast'>;
  /** The daemon's one keyed tagging of session ids (rows, events, spans and log lines name a session alike). */
  sessionTags: SessionTags;
}

export interface Announcer {
  /** A downstream list changed (`server`: because of that server). */
  listChanged(kind: ListKind, server?: string | null): void;
  invocation(record: InvocationRecord): void;
  /** A server was added, updated (enabled and disabled too) or removed: every list may differ. */
  serverChanged(server: string, action: 'added' | 'updated' | 'removed'): void;
  /** Announces the router's events too. */
  follow(router: Router): void;
}

const now = (): string => new Date().toISOString();

/** Call before the routing core subscribes to the pool: an upstream's health is announced before the sessions are asked to list again. */
export function announce(pool: UpstreamPool, invocations: InvocationLog, { bus, log, sessions, sessionTags }: Audience): Announcer {
  const listChanged = (kind: ListKind, server: string | null = null): void => {
    sessions.broadcast({ jsonrpc: '2.0', method: LIST_CHANGED_METHOD[kind] });
    bus.publish({ type: 'list_changed', server, kind, at: now() });
  };
  pool.on('list_changed', (server, kind) => listChanged(kind, server));
  pool.on('state', (server, status) => {
    log.info('upstream state', { server, state: status.state, error: status.lastError });
    bus.publish({ type: 'health', server, state: status.state, last_error: status.lastError, at: now() });
  });
  const follow = (router: Router): void => {
    router.on('list_changed', (kind) => listChanged(kind));
    router.on('degraded', (server, kind, reason) => {
      const why = sanitiseText(reason);
      log.warn('upstream left out of list', { server, kind, reason: why });
      bus.publish({ type: 'degraded', server, kind, reason: why, at: now() });
    });
    router.on('recovered', (server, kind) => {
      log.info('upstream answers again', { server, kind });
      bus.publish({ type: 'recovered', server, kind, at: now() });
    });
    router.on('collision', ({ server, kind, original, exposed }) => {
      log.warn('unprefixed name taken by another server: exposed prefixed', { server, kind, original, exposed });
      bus.publish({ type: 'namespace_collision', server, kind, original, exposed, at: now() });
    });
    router.on('hidden', ({ server, kind, original, claimedBy }) => log.warn("unprefixed name in another server's prefix form: hidden", { server, kind, original, claimed_by: claimedBy }));
  };
  return {
    listChanged,
    follow,
    serverChanged: (server, action) => {
      bus.publish({ type: 'server', action, server, at: now() });
      for (const kind of PRIMARY_KINDS) listChanged(kind, server);
    },
    invocation: (call) => {
      // The session id works as a password: rows and events carry its tag.
      const invocation = { ...call, session: sessionTags.tag(call.session) };
      invocations.add(invocation);
      bus.publish({ type: 'invocation', invocation });
    },
  };
}
