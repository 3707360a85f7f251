// Which MCP era an upstream speaks, decided from its answer to a
// `server/discover` probe (2026-07-28 era) as the spec's backward-compatibility
// rules say: a DiscoverResult offering our version, or an unsupported-version
// error naming it, is the modern era; any other JSON-RPC error or HTTP refusal
// means a 2025-era server (fall back to initialize). An auth refusal or a
// network failure is no verdict at all. Pure, so the policy is unit-testable.
import type { ProtocolSetting } from '../../src/protocol/server-config.js';
import { isObject } from '../../src/protocol/json-object.js';
import { MODERN_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../src/protocol/mcp-versions.js';

/** The spec's unsupported-protocol-version error (HTTP 400, `data: {supported, requested}`). */
export const UNSUPPORTED_VERSION = -32022;

export type Era = 'legacy' | 'modern';

/** How the probe ended. */
export type ProbeOutcome =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'rpc-error'; code: number; message: string; data?: unknown }
  /** An HTTP answer that was no JSON-RPC message. */
  | { kind: 'http-status'; status: number; message: string }
  /** stdio: no answer within the probe window (servers that ignore unknown methods). */
  | { kind: 'silent' }
  /** stdio: the child exited on the probe (some SDKs kill the process on any request before initialize). */
  | { kind: 'exited' }
  /** The network failed (refused, reset): an outage, not an answer. */
  | { kind: 'failed'; message: string };

export type Verdict =
  | { era: 'modern'; discover: Record<string, unknown> }
  /** `silent`: a stdio server did not answer in the window (it may only be slow to start). */
  | { era: 'legacy'; reason: string; silent: boolean }
  | { era: 'none'; message: string };

/** The stable codes a failed negotiation is reported with (in the health's last error and the test connection). */
export const ERA_NEGOTIATION_FAILED = 'ERA_NEGOTIATION_FAILED';
export const UPSTREAM_VERSION_MISMATCH = 'UPSTREAM_VERSION_MISMATCH';

function versionsOf(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? (value as string[]) : null;
}

function describe(outcome: ProbeOutcome): string {
  switch (outcome.kind) {
    case 'result':
      return 'a result that is no DiscoverResult';
    case 'rpc-error':
      return `error ${outcome.code} ${JSON.stringify(outcome.message.slice(0, 200))}`;
    case 'http-status':
      return `HTTP ${outcome.status}`;
    case 'silent':
      return 'no answer within the probe window';
    case 'exited':
      return 'the process exited';
    case 'failed':
      return outcome.message;
  }
}

const pinnedHint = `set "protocol" to "auto" (or "2025-11-25") to speak the 2025 era with this server`;

function mismatch(offered: string[]): Verdict {
  return {
    era: 'none',
    message: `${UPSTREAM_VERSION_MISMATCH}: the upstream offers protocol ${offered.join(', ') || '(none)'}; coffer speaks ${MODERN_PROTOCOL_VERSION} and ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}: update the server or coffer`,
  };
}

/** The era to speak, or why there is none; `setting` is the server's `protocol` ("auto" or a pinned version). */
export function verdictOf(outcome: ProbeOutcome, setting: ProtocolSetting): Verdict {
  const pinned = setting === MODERN_PROTOCOL_VERSION;
  if (outcome.kind === 'failed' || (outcome.kind === 'http-status' && (outcome.status === 401 || outcome.status === 403))) {
    // Silence or a refusal at the door says nothing about the era; the connect fails and is retried.
    return { era: 'none', message: `server/discover failed: ${describe(outcome)}` };
  }
  if (outcome.kind === 'result') {
    const offered = versionsOf(outcome.result.supportedVersions);
    if (offered?.includes(MODERN_PROTOCOL_VERSION)) return { era: 'modern', discover: outcome.result };
    if (offered && pinned) return mismatch(offered);
  }
  if (outcome.kind === 'rpc-error' && outcome.code === UNSUPPORTED_VERSION && isObject(outcome.data)) {
    const offered = versionsOf(outcome.data.supported);
    // A recognised modern error: the server knows the era, so falling back would be wrong unless it names a 2025 version.
    if (offered && !offered.some((version) => SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return mismatch(offered);
  }
  const why = describe(outcome);
  if (pinned) {
    return { era: 'none', message: `${ERA_NEGOTIATION_FAILED}: the server did not offer pinned protocol version ${MODERN_PROTOCOL_VERSION} via server/discover (${why}); ${pinnedHint}` };
  }
  return { era: 'legacy', reason: `server/discover answered ${why}`, silent: outcome.kind === 'silent' };
}
