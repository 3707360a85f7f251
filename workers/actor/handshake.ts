// Opening an MCP session with an upstream in the era it speaks: the
// server/discover probe first (unless the server is pinned to, or already
// known to speak, the 2025 era), then either the 2026-07-28 era straight away
// or the 2025 era's initialize handshake.
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { messageOf } from '../../src/protocol/errors.js';
import { cleanInstructions } from '../../src/protocol/instructions.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../../src/protocol/mcp-versions.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { MODERN_PROTOCOL_VERSION } from '../../src/protocol/mcp-versions.js';
import { UNSUPPORTED_VERSION, UPSTREAM_VERSION_MISMATCH, type Era } from './era-negotiation.js';
import { isObject } from '../../src/protocol/json-object.js';
import { clipText } from '../../src/protocol/untrusted-text.js';
import { RpcError, type JsonRpcSession } from './jsonrpc-session.js';
import type { ActorLog } from './log.js';
import { ModernSession, ProbeExitedError, SERVER_INFO_META } from './modern-session.js';
import type { UpstreamTransport } from './transports.js';

export interface Agreed {
  protocol: string;
  capabilities: ServerCapabilities;
  serverInfo: { name: string; version: string } | null;
  instructions: string | null;
  /** Set for a 2026-07-28-era upstream. */
  modern: ModernSession | null;
}

export interface HandshakeParts {
  session: JsonRpcSession;
  upstream: UpstreamTransport;
  config: ServerConfig;
  log: ActorLog;
  clientInfo: { name: string; version: string };
  /** Declared at initialize: what coffer can relay to a client on this connection. */
  clientCapabilities: Record<string, unknown>;
  /** The era an earlier connection found: legacy skips the probe. */
  knownEra: Era | null;
  /** Whether the session has ended (a stdio child that exited on the probe). */
  ended(): boolean;
}

/**
 * What the upstream says it is: text to show, so it is taken only as text and
 * clipped (it goes into every state event), and a malformed one is left out
 * rather than failing a connection its tools would work on.
 */
function serverInfoOf(value: unknown): Agreed['serverInfo'] {
  if (!isObject(value) || typeof value.name !== 'string') return null;
  return { name: clipText(value.name), version: typeof value.version === 'string' ? clipText(value.version) : '' };
}

export async function handshake(parts: HandshakeParts): Promise<Agreed> {
  const { config, log } = parts;
  if (config.protocol !== LATEST_PROTOCOL_VERSION && parts.knownEra !== 'legacy') {
    const modern = new ModernSession(parts.session, parts.upstream, parts.clientInfo, log);
    const verdict = await modern.negotiate(config.protocol, config.timeouts.connect_ms, config.transport.type === 'stdio');
    if (verdict.era === 'none') throw new Error(verdict.message);
    if (verdict.era === 'modern') return agreedModern(parts, modern, verdict.discover);
    if (parts.ended()) throw new ProbeExitedError();
    log.note(`speaking the 2025 era: ${verdict.reason}`);
    if (verdict.silent) return initializeAfterSilence(parts, modern);
  }
  return initialize(parts);
}

/** A modern-only server that was only slow to start (many children booting at once) refuses initialize: it is asked again, without a window. */
async function initializeAfterSilence(parts: HandshakeParts, modern: ModernSession): Promise<Agreed> {
  try {
    return await initialize(parts);
  } catch (error) {
    if (!(error instanceof VersionRefusedError)) throw error;
    const again = await modern.negotiate(parts.config.protocol, parts.config.timeouts.connect_ms, false);
    if (again.era !== 'modern') throw error;
    parts.log.note('speaking the 2026 era after all: the server refused initialize and then answered server/discover');
    return agreedModern(parts, modern, again.discover);
  }
}

function agreedModern(parts: HandshakeParts, modern: ModernSession, discover: Record<string, unknown>): Agreed {
  parts.upstream.transport.setProtocolVersion?.(MODERN_PROTOCOL_VERSION);
  return {
    protocol: MODERN_PROTOCOL_VERSION,
    capabilities: (isObject(discover.capabilities) ? discover.capabilities : {}) as ServerCapabilities,
    serverInfo: serverInfoOf(isObject(discover._meta) ? discover._meta[SERVER_INFO_META] : undefined),
    instructions: cleanInstructions(discover.instructions),
    modern,
  };
}

/** The upstream refused initialize because it speaks only the 2026 era. */
class VersionRefusedError extends Error {}

async function initialize({ session, upstream, clientInfo, clientCapabilities }: HandshakeParts): Promise<Agreed> {
  const result = await session
    .request('initialize', { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: clientCapabilities, clientInfo })
    .catch((error: unknown) => {
      // A 2026-07-28-only server refuses initialize with -32022 (over HTTP inside a 400 body).
      const refused = (error instanceof RpcError && error.code === UNSUPPORTED_VERSION) || messageOf(error).includes(`"code":${UNSUPPORTED_VERSION}`);
      if (!refused) throw error;
      throw new VersionRefusedError(`${UPSTREAM_VERSION_MISMATCH}: the upstream refused initialize (the 2025 era) and speaks only ${MODERN_PROTOCOL_VERSION}: set "protocol" to "auto" or "${MODERN_PROTOCOL_VERSION}"`);
    });
  const version = result.protocolVersion;
  if (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw new Error(`Server's protocol version is not supported: ${String(version)}`);
  }
  upstream.transport.setProtocolVersion?.(version);
  await session.notify('notifications/initialized');
  return {
    protocol: version,
    capabilities: (isObject(result.capabilities) ? result.capabilities : {}) as ServerCapabilities,
    serverInfo: serverInfoOf(result.serverInfo),
    instructions: cleanInstructions(result.instructions),
    modern: null,
  };
}
