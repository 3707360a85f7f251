// The protocol core shared by the synthetic upstreams (HTTP host and stdio
// server): a hand-written JSON-RPC responder instead of the SDK Server, so the
// upstream side costs almost nothing and the benchmark measures the gateway,
// not the fixture. Lists are serialised once per tool count and spliced in.

export interface ServerBehaviour {
  /** Tools this server lists (tool 0 is `echo`, the rest `tool_<n>`). */
  tools: number;
  /** Delay before a tools/call answer. */
  latencyMs: number;
  /** Initialize answers; every list and call is accepted and never answered. */
  hang: boolean;
  /**
   * Speaks 2026-07-28 beside 2025-11-25: answers server/discover, and a
   * request with the per-request envelope as that era's servers do
   * (resultType, serverInfo, a list's cache hints), at the same cost.
   */
  modern: boolean;
}

export const DEFAULT_BEHAVIOUR: ServerBehaviour = { tools: 20, latencyMs: 0, hang: false, modern: false };

export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

/** A realistic-sized tool definition (~350 bytes of JSON): a described object schema with a few fields. */
export function toolDefinition(index: number): Record<string, unknown> {
  if (index === 0) {
    return {
      name: 'echo',
      description: 'Returns its arguments as JSON text.',
      inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'anything' } }, additionalProperties: true },
    };
  }
  return {
    name: `tool_${index}`,
    description: `Synthetic tool number ${index}: does nothing useful, but has a schema of typical size.`,
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A path relative to the workspace root.' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'How many items at most.' },
        recursive: { type: 'boolean', description: 'Descend into sub-folders.' },
        mode: { type: 'string', enum: ['fast', 'thorough'] },
      },
      required: ['path'],
    },
  };
}

export function toolList(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_unused, index) => toolDefinition(index));
}

const serialisedLists = new Map<number, string>();
function serialisedList(count: number): string {
  let json = serialisedLists.get(count);
  if (json === undefined) serialisedLists.set(count, (json = JSON.stringify(toolList(count))));
  return json;
}

const HANG = Symbol('hang');
export type Answer = string | null | typeof HANG;
export { HANG };

function result(id: RpcMessage['id'], body: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${body}}`;
}

const MODERN_VERSION = '2026-07-28';
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
/** A 2026-07-28 list lives as long as a legacy one lives in coffer's cache, so a warm list is coffer's cache in both eras. */
const MODERN_CACHE_HINTS = '"ttlMs":60000,"cacheScope":"public",';

/** The fields a 2026-07-28 result adds (before its own, which follow in the same object). */
function modernMarks(serverName: string): string {
  return `"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":${JSON.stringify(serverName)},"version":"1.0.0"}},`;
}

function isModern(message: RpcMessage, behaviour: ServerBehaviour): boolean {
  const meta = message.params?._meta as Record<string, unknown> | undefined;
  return behaviour.modern && meta?.[PROTOCOL_VERSION_META] === MODERN_VERSION;
}

function error(id: RpcMessage['id'], code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Answers one message: a serialised JSON-RPC response, null for a
 * notification (nothing to send), or HANG (never answer).
 */
export async function answer(message: RpcMessage, behaviour: ServerBehaviour, serverName: string): Promise<Answer> {
  if (message.id === undefined || message.id === null || typeof message.method !== 'string') return null;
  const { id } = message;
  const marks = isModern(message, behaviour) ? modernMarks(serverName) : '';
  switch (message.method) {
    case 'server/discover':
      if (!marks) return error(id, -32601, 'Method not found: server/discover');
      return result(id, `{${marks}"supportedVersions":["${MODERN_VERSION}"],"capabilities":{"tools":{"listChanged":false}}}`);
    case 'initialize': {
      const requested = message.params?.protocolVersion;
      const protocolVersion = typeof requested === 'string' ? requested : '2025-03-26';
      return result(id, JSON.stringify({ protocolVersion, capabilities: { tools: { listChanged: false } }, serverInfo: { name: serverName, version: '1.0.0' } }));
    }
    case 'ping':
      return result(id, '{}');
    case 'tools/list':
      if (behaviour.hang) return HANG;
      return result(id, `{${marks}${marks && MODERN_CACHE_HINTS}"tools":${serialisedList(behaviour.tools)}}`);
    case 'tools/call': {
      if (behaviour.hang) return HANG;
      if (behaviour.latencyMs > 0) await sleep(behaviour.latencyMs);
      const args = (message.params?.arguments ?? {}) as Record<string, unknown>;
      return result(id, `{${marks}"content":${JSON.stringify([{ type: 'text', text: JSON.stringify(args) }])}}`);
    }
    case 'resources/list':
    case 'resources/templates/list':
    case 'prompts/list':
      return error(id, -32601, 'Method not found');
    default:
      return error(id, -32601, `Method not found: ${message.method}`);
  }
}
