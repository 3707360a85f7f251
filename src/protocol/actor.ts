// Messages between the router (main thread) and one upstream actor (worker).
// Everything the router asks (lists, forwarded requests, their cancels, the
// one-way commands, shutdown) goes as CallMessages on the `calls` port and is
// answered there as CallReplies; the actor reports ActorEvents on the `events`
// port. Both ports are handed over in ActorInit.
import type { MessagePort } from 'node:worker_threads';
import type { ListKind } from './capabilities.js';
import type { OAuthAction, OAuthOutcome, OAuthRecord } from './oauth.js';
import type { ErrorBody, JsonRpcErrorBody } from './errors.js';
import type { EncodedList } from './list-codec.js';
import type { ServerConfig } from './server-config.js';

/** needs_auth: the upstream wants an OAuth sign-in by a person (`coffer mcp auth NAME`); no retries until then. */
export type ActorState = 'connecting' | 'ready' | 'backoff' | 'failed' | 'needs_auth' | 'stopped';

export interface ActorTuning {
  /** R2: list cache lifetime. */
  cacheTtlMs: number;
  /** First reconnect delay; doubles per failed attempt, with jitter. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Consecutive failed connects (or crashes within crashWindowMs of ready) before state `failed`. */
  crashLoopLimit: number;
  /** A session that lived shorter than this before dying counts towards the crash loop. */
  crashWindowMs: number;
}

export const DEFAULT_ACTOR_TUNING: ActorTuning = {
  cacheTtlMs: 60_000,
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  crashLoopLimit: 8,
  crashWindowMs: 10_000,
};

/** workerData of an actor worker. `events` and `calls` must be in the transfer list. */
export interface ActorInit {
  config: ServerConfig;
  /** Where a stdio child's stderr is appended. */
  logFile: string;
  tuning: ActorTuning;
  events: MessagePort;
  /** CallMessages in, CallReplies out. */
  calls: MessagePort;
  /** HTTP/SSE upstreams: the stored OAuth state, if any. */
  oauth?: OAuthRecord | null;
  /** The actor's scripts and V8 code caches as the daemon read them (ScriptStore, workers/actor/code-cache.cts); absent: the worker reads the scripts itself, with no cache. */
  scripts?: ScriptSet;
}

/** One script of the actor: its text (a function expression) and, when there is a good one, its V8 code cache. */
export interface ActorScript {
  /** Its cache's file name. */
  name: string;
  code: Uint8Array;
  cache?: Uint8Array;
}

/** What a worker needs to run the actor's scripts: by path, as its require()s name them. */
export interface ScriptSet {
  /** Where caches are written (created 0700 on the first write); undefined: none is. */
  dir?: string;
  scripts: Record<string, ActorScript>;
}

/**
 * A list answer. Live items travel encoded in a transferred buffer
 * (`list` decodes to the upstream's item array, schemas normalised; see
 * list-codec.ts).
 * `version` changes whenever the actor's cached list for this kind changes,
 * so the router can cache what it derives from it.
 */
/** `expiresAt`: when the actor's entry goes stale (its TTL, shortened by the upstream's own ttlMs). */
export type ListOutcome =
  | { ok: true; state: 'live'; kind: ListKind; list: EncodedList; version: number; fetchedAt: number; expiresAt?: number; cached: boolean }
  /** The upstream answered -32601 or did not advertise the capability: it has none (R7, R8). */
  | { ok: true; state: 'unsupported'; kind: ListKind; version: number; fetchedAt: number; expiresAt?: number; cached: boolean }
  /** UPSTREAM_UNAVAILABLE after the one retry on a fresh connection, or UPSTREAM_TIMEOUT (not retried). */
  | { ok: false; kind: ListKind; error: ErrorBody };

/** One downstream request forwarded as is (original name / URI already restored by the router). */
export interface ForwardRequest {
  /** Router-assigned id, used by cancel() and to attribute the upstream's requests during the call. */
  id: string;
  method: string;
  params: Record<string, unknown>;
  /** The downstream client asked for progress: ask the upstream for it and pass it back with the call. */
  progress: boolean;
  /** Overrides the server's request_ms. */
  timeoutMs?: number;
  /** How long the client may take to answer the upstream's requests during this call (default: the server's request_ms). */
  answerTimeoutMs?: number;
  /** The downstream session: picks its connection in per_session mode, and tells whom the upstream's requests during this call are for. */
  client?: ClientRef;
  /** The call is traced: the answer says when the actor sent it upstream and had the answer. */
  timed?: boolean;
}

/** A downstream session as the actor sees it. */
export interface ClientRef {
  session: string;
  /** A modern caller's credential digest: its calls each have a session, and are one client's for attribution. */
  caller?: string;
  /** What the client declared at initialize; a per_session connection declares the same (sampling, elicitation, roots). */
  capabilities: Record<string, unknown>;
  /** For a modern upstream: the level of log messages the client wants during this request (none: no messages). */
  logLevel?: string;
}

/** The upstream's result unchanged, or a JSON-RPC error (the upstream's own, or coffer's with data.code). */
export type ForwardOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: JsonRpcErrorBody };

/**
 * What the `calls` port carries, in order: a cancel or a session's close can
 * never overtake the call it is about. Plain numbered messages, not comlink:
 * comlink makes a proxy, a UUID and a message listener per call (every answer
 * then runs every waiting call's listener), about half of a thread round
 * trip's cost here, on the path every tools/call and every list takes.
 */
export type CallMessage =
  | { type: 'forward'; seq: number; req: ForwardRequest }
  /** `fresh` bypasses (and replaces) the cache. */
  | { type: 'list'; seq: number; kind: ListKind; fresh: boolean }
  /** Close the connection, stop the child process (SIGTERM, then SIGKILL), state `stopped`. */
  | { type: 'shutdown'; seq: number }
  /** Aborts a forwarded request; the upstream gets notifications/cancelled. */
  | { type: 'cancel'; id: string; reason: string }
  /** OAuth sign-in steps of an HTTP/SSE upstream. */
  | { type: 'oauth'; seq: number; action: OAuthAction }
  /** The actor's own V8 heap, for the metrics. */
  | { type: 'heap'; seq: number }
  | { type: 'command'; command: ActorCommand };

/** The upstream's progress on a forwarded request: only the fields the spec gives it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * What comes back on the `calls` port for message `seq`: a forward's progress
 * (before its answer, on the same ordered port), then the answer: a forward's
 * outcome, a list (its buffer transferred), shutdown done, or why the actor
 * could not produce one.
 */
export type CallReply = { seq: number; progress: Progress } | CallAnswer;
export type CallAnswer =
  /** `upstreamAt`: [sent, answered] in epoch ms, for a `timed` forward. */
  | { seq: number; outcome: ForwardOutcome; upstreamAt?: [number, number] }
  | { seq: number; list: ListOutcome }
  | { seq: number; done: true }
  | { seq: number; oauth: OAuthOutcome }
  | { seq: number; heap: ActorHeap }
  | { seq: number; failure: string };

/** An actor thread's V8 heap in bytes (v8.getHeapStatistics): in use, allocated, and the most it may grow to. */
export interface ActorHeap {
  used: number;
  total: number;
  limit: number;
}

export interface ActorStatus {
  server: string;
  state: ActorState;
  since: number;
  /** Consecutive failed attempts in the current backoff run. */
  attempts: number;
  lastError: string | null;
  serverInfo: { name: string; version: string } | null;
  /** The connected upstream's `instructions`, cleaned and bounded (src/protocol/instructions.ts); absent if it sent none. */
  instructions?: string;
  /** The list kinds whose capability the connected upstream declares (what an unprefixed name can belong to). */
  serves?: ListKind[];
  /** The ids of the extensions the connected upstream declares (capabilities.extensions); absent if none. */
  extensions?: string[];
  protocolVersion: string | null;
  /** legacy: initialize (2025-11-25 and before); modern: per-request envelope (2026-07-28). Null while not connected. */
  era: 'legacy' | 'modern' | null;
  /** Child pid for stdio upstreams while connected. */
  pid: number | null;
}

/** One-way messages from the router (answers to client_request, client notifications, closed sessions). */
export type ActorCommand =
  /** The client's answer to a client_request event. */
  | { type: 'answer'; ticket: number; outcome: ForwardOutcome }
  /** A client notification for the upstream (notifications/roots/list_changed): to the session's connection, or the shared one. */
  | { type: 'notify'; session: string; method: string; params?: Record<string, unknown> }
  /** The downstream session ended: close its per_session connection. */
  | { type: 'close_session'; session: string }
  /** The client's notifications/progress for the client_request `ticket` (params carry the upstream's own progressToken again). */
  | { type: 'progress'; ticket: number; params: Record<string, unknown> };

/**
 * Who an upstream's request or notification is for. `forwardId` is the
 * forwarded call it came with (its downstream request id is known to the
 * router); without one, `session` alone (a per_session connection); neither:
 * no particular client.
 */
export interface ClientTarget {
  forwardId: string | null;
  session: string | null;
}

export type ActorEvent =
  | { type: 'state'; server: string; status: ActorStatus }
  /** The upstream said its list changed (cache already dropped), or a reconnect dropped the cache. */
  | { type: 'list_changed'; server: string; kind: ListKind }
  /** The upstream asked the client something (sampling/createMessage, elicitation/create, roots/list); answer with command `answer`. */
  | { type: 'client_request'; server: string; ticket: number; target: ClientTarget; method: string; params: Record<string, unknown> }
  /** The upstream cancelled (or timed out) a client_request. */
  | { type: 'client_request_cancelled'; server: string; ticket: number; reason: string }
  /** Any other upstream notification for clients (notifications/message, notifications/resources/updated, ...). */
  | { type: 'notification'; server: string; target: ClientTarget; method: string; params: Record<string, unknown> }
  /** The upstream's OAuth state changed (null: forgotten): to be sealed and stored, never published. */
  | { type: 'oauth_saved'; server: string; record: OAuthRecord | null };
