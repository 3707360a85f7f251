// The checks a modern request passes after the era classifier and before it
// is served, in the SDK's order: the revision must be one coffer serves
// (-32022 naming the supported ones), then the standard headers must be
// there and agree with the body (MCP-Protocol-Version, Mcp-Method, and
// Mcp-Name for the methods that name a target), else -32020. Pure.
import { headerMismatch, type EraRejection } from '../era.js';
import { decodeHeaderValue, isPlainObject, MODERN_VERSIONS, stripOws } from './wire.js';

export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The params field each targeted method mirrors into Mcp-Name (the tasks extension's methods name their task). */
const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri' | 'taskId'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export interface ModernHeaders {
  versionHeader?: string;
  methodHeader?: string;
  nameHeader?: string;
}

/** -32022 unless the request's revision is one coffer serves. */
export function checkRevision(revision: string | undefined): EraRejection | undefined {
  if (revision !== undefined && MODERN_VERSIONS.includes(revision)) return undefined;
  const requested = revision ?? 'unknown';
  return {
    kind: 'reject',
    cell: 'unsupported-revision',
    status: 400,
    code: UNSUPPORTED_PROTOCOL_VERSION,
    message: `Unsupported protocol version: ${requested}; coffer serves ${MODERN_VERSIONS.join(', ')} per request, and 2025-11-25 and earlier through initialize`,
    data: { supported: [...MODERN_VERSIONS], requested },
  };
}

/** The standard headers of a modern request (notifications are exempt). */
export function checkStandardHeaders(method: string, params: unknown, isRequest: boolean, headers: ModernHeaders): EraRejection | undefined {
  if (!isRequest) return undefined;
  if (headers.versionHeader === undefined) {
    return headerMismatch('version-header-missing', '(missing)', 'the body carries a modern per-request envelope but the required MCP-Protocol-Version header is absent');
  }
  if (headers.methodHeader === undefined) {
    return headerMismatch('method-header-missing', '(missing)', `the body names method ${method} but the required Mcp-Method header is absent`);
  }
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  if (field === undefined) return undefined;
  const raw = isPlainObject(params) ? params[field] : undefined;
  const bodyValue = typeof raw === 'string' ? raw : undefined;
  if (headers.nameHeader === undefined) {
    return bodyValue === undefined ? undefined : headerMismatch('name-header-missing', '(missing)', `the body carries params.${field}="${bodyValue}" but the required Mcp-Name header is absent`);
  }
  const header = stripOws(headers.nameHeader);
  const decoded = decodeHeaderValue(header);
  if (decoded === undefined) return headerMismatch('name-header-invalid-encoding', header, 'the Mcp-Name header carries an invalid Base64 sentinel value');
  if (bodyValue !== undefined && decoded !== bodyValue) {
    return headerMismatch('name-header-mismatch', header, `the body carries params.${field}="${bodyValue}" but the Mcp-Name header names "${decoded}"`);
  }
  return undefined;
}
