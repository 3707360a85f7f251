// One downstream MCP session: its transport (the SDK's, with coffer's fast path) and what the client declared.
import type { SessionTransport } from './session-transport.js';
import type { Cancel } from '../protocol/cancel.js';

export interface McpSession {
  /** Empty until the transport accepted `initialize`. */
  id: string;
  /** What logs name the session by (session-tag.ts: the id works as a credential); empty until initialized. */
  tag: string;
  /** The id of the credential that initialized the session; a request with another one does not reach it. */
  credential: string;
  /** The toolset the session sees, fixed at initialize; null: the whole enabled surface. */
  toolset: string | null;
  transport: SessionTransport;
  protocolVersion: string | null;
  clientInfo: { name?: string; version?: string } | null;
  clientCapabilities: Record<string, unknown>;
  /** Downstream request id → abort controller of its forwarded call. */
  inflight: Map<string | number, Cancel>;
  /**
   * Ids of this session's requests not yet answered. The transport routes an
   * answer to its HTTP stream by id, so a reused id would strand the first
   * request's stream; SessionRegistry refuses a POST that reuses one.
   */
  pending: Set<string | number>;
  lastActiveAt: number;
  /** coffer's own requests to this client (relayed from upstreams) awaiting its answer, by the id coffer gave them. */
  outgoing?: Map<string, (answer: ClientAnswer) => void>;
}

/** A client's answer to a request coffer relayed to it. */
export type ClientAnswer = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } };
