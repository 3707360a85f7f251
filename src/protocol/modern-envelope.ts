// What every request to a 2026-07-28-era upstream carries: the per-request
// `_meta` envelope (protocol version, client capabilities, client info, and the
// log level when the caller wants log messages) in the body, and on Streamable
// HTTP the headers the server checks against the body (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, Mcp-Param-* for tool arguments annotated
// x-mcp-header). Pure functions.
import type { OutgoingHttpHeaders } from 'node:http';
import { TASK_METHODS } from './extensions.js';
import { extended } from './extended.js';
import { isObject } from './json-object.js';
import { MODERN_PROTOCOL_VERSION } from './mcp-versions.js';
import type { HeaderParam } from './mcp-param-headers.js';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** `params` with the envelope merged into its `_meta` (keys the caller set, e.g. progressToken, stay); a log level only when given. */
export function withEnvelope(
  params: Record<string, unknown> | undefined,
  capabilities: Record<string, unknown>,
  clientInfo: { name: string; version: string },
  logLevel?: string,
): Record<string, unknown> {
  const meta = isObject(params?._meta) ? params._meta : {};
  const envelope = {
    [META.protocolVersion]: MODERN_PROTOCOL_VERSION,
    [META.clientCapabilities]: capabilities,
    [META.clientInfo]: clientInfo,
    ...(logLevel === undefined ? {} : { [META.logLevel]: logLevel }),
  };
  return extended(params ?? {}, { _meta: extended(meta, envelope) });
}

const VISIBLE_ASCII = /^[\x20-\x7e]*$/;
const BASE64_SENTINEL = /^=\?base64\?.*\?=$/i;

/** Visible ASCII without surrounding whitespace goes as is; anything else as the spec's `=?base64?…?=` sentinel. */
export function headerValue(value: string): string {
  const plain = VISIBLE_ASCII.test(value) && value.trim() === value && !BASE64_SENTINEL.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The value an x-mcp-header argument is mirrored as; null/absent/non-primitive: no header. */
function paramValue(value: unknown): string | undefined {
  if (typeof value === 'string') return headerValue(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The name a request's Mcp-Name carries: the tool or prompt name, the resource URI, or the task (tasks extension). */
function nameOf(method: string, params: Record<string, unknown>): unknown {
  if (method === 'tools/call' || method === 'prompts/get') return params.name;
  if (method === 'resources/read') return params.uri;
  if (TASK_METHODS.has(method)) return params.taskId;
  return undefined;
}

/** The headers of one message to a modern upstream; `headerParams` names the x-mcp-header arguments of a tool. */
export function modernHeaders(message: Record<string, unknown>, headerParams: (tool: string) => readonly HeaderParam[]): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION };
  const method = message.method;
  if (typeof method !== 'string') return headers;
  headers['mcp-method'] = method;
  const params = isObject(message.params) ? message.params : {};
  const name = nameOf(method, params);
  if (typeof name === 'string') headers['mcp-name'] = headerValue(name);
  if (method === 'tools/call' && typeof name === 'string') {
    const args = isObject(params.arguments) ? params.arguments : {};
    for (const { argument, header } of headerParams(name)) {
      const value = paramValue(args[argument]);
      if (value !== undefined) headers[`mcp-param-${header.toLowerCase()}`] = value;
    }
  }
  return headers;
}
