// Which MCP era an HTTP request on /mcp belongs to, decided once, before any
// session lookup: the SDK's body-primary ladder (createMcpHandler's
// classifyInboundRequest), re-implemented without zod. A request whose
// params._meta carries the protocol-version claim is modern (2026-07-28: no
// session, metadata per request); initialize, claim-less messages, GET and
// DELETE, posted responses and all-legacy batches are legacy (2025-11-25:
// sessions). Headers only cross-check the body; they never pick the era, but
// a disagreement is refused. Pure: a value in, a verdict out.
import { envelopeIssues } from './modern/envelope.js';
import { isModernVersion, isPlainObject, metaOf, PROTOCOL_VERSION_META_KEY, stripOws } from './modern/wire.js';

export const HEADER_MISMATCH = -32020;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

export interface EraInput {
  httpMethod: string;
  /** MCP-Protocol-Version, Mcp-Method, when present. */
  versionHeader?: string;
  methodHeader?: string;
  /** The parsed body (undefined for GET/DELETE). */
  body?: unknown;
}

export type LegacyReason = 'http-method' | 'initialize' | 'no-claim' | 'notification' | 'batch' | 'response';

export type EraVerdict =
  | { kind: 'legacy'; reason: LegacyReason }
  | { kind: 'modern'; message: ModernMessage; revision: string | undefined }
  | EraRejection;

export interface ModernMessage {
  jsonrpc: '2.0';
  id?: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/** A refusal: the JSON-RPC error and the HTTP status it goes with; `cell` names the rule (stable, for tests). */
export interface EraRejection {
  kind: 'reject';
  cell: string;
  status: number;
  code: number;
  message: string;
  data?: unknown;
}

/** Refusals of a malformed body that owes nothing to the modern era: the legacy path answers those as it always has. */
export const SHAPE_ONLY_CELLS: ReadonlySet<string> = new Set(['empty-batch', 'batch-with-invalid-element', 'invalid-json-rpc-body']);

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);

function isId(value: unknown): value is string | number {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

function onlyKeys(value: Record<string, unknown>, allowed: Set<string>): boolean {
  return Object.keys(value).every((key) => allowed.has(key));
}

/** params as the SDK's base schemas take them: absent, or an object whose _meta (if any) is an object with a valid progressToken and related-task. */
function isBaseParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (!isPlainObject(params)) return false;
  if (params._meta === undefined) return true;
  const meta = params._meta;
  if (!isPlainObject(meta)) return false;
  if (meta.progressToken !== undefined && !isId(meta.progressToken)) return false;
  const related = meta['io.modelcontextprotocol/related-task'];
  return related === undefined || (isPlainObject(related) && typeof related.taskId === 'string');
}

function isRequest(value: Record<string, unknown>): value is Record<string, unknown> & ModernMessage {
  return value.jsonrpc === '2.0' && isId(value.id) && typeof value.method === 'string' && onlyKeys(value, REQUEST_KEYS) && isBaseParams(value.params);
}

function isNotification(value: Record<string, unknown>): value is Record<string, unknown> & ModernMessage {
  return value.jsonrpc === '2.0' && typeof value.method === 'string' && onlyKeys(value, NOTIFICATION_KEYS) && isBaseParams(value.params);
}

function isResultResponse(value: unknown): boolean {
  if (!isPlainObject(value) || value.jsonrpc !== '2.0' || !isId(value.id) || !onlyKeys(value, RESULT_KEYS)) return false;
  return isPlainObject(value.result) && (value.result._meta === undefined || isPlainObject(value.result._meta));
}

function isErrorResponse(value: unknown): boolean {
  if (!isPlainObject(value) || value.jsonrpc !== '2.0' || !onlyKeys(value, ERROR_KEYS) || !('error' in value)) return false;
  if (value.id !== undefined && !isId(value.id)) return false;
  const error = value.error;
  return isPlainObject(error) && Number.isInteger(error.code) && typeof error.message === 'string';
}

function hasClaim(params: unknown): boolean {
  const meta = metaOf(params);
  return meta !== undefined && PROTOCOL_VERSION_META_KEY in meta;
}

function claimedVersion(params: unknown): string | undefined {
  const value = metaOf(params)?.[PROTOCOL_VERSION_META_KEY];
  return typeof value === 'string' ? value : undefined;
}

function reject(cell: string, code: number, message: string, data?: unknown, status = 400): EraRejection {
  return data === undefined ? { kind: 'reject', cell, status, code, message } : { kind: 'reject', cell, status, code, message, data };
}

export function headerMismatch(cell: string, header: string, body: string): EraRejection {
  return reject(cell, HEADER_MISMATCH, `Bad Request: the request headers and body disagree: ${body}`, { code: 'HEADER_MISMATCH', mismatch: { header, body } });
}

function envelopeRejection(cell: string, issue: { key: string; problem: string }): EraRejection {
  return reject(cell, INVALID_PARAMS, `Invalid _meta envelope for protocol revision 2026-07-28: ${issue.key}: ${issue.problem}`, { envelope: issue });
}

function carriesValidModernClaim(params: unknown): boolean {
  const version = claimedVersion(params);
  const meta = metaOf(params);
  return version !== undefined && isModernVersion(version) && meta !== undefined && envelopeIssues(meta).length === 0;
}

function classifyRequest(input: EraInput, body: ModernMessage): EraVerdict {
  const { params, method } = body;
  const header = input.versionHeader;
  const headerModern = header !== undefined && isModernVersion(header);
  if (method === 'initialize' && !carriesValidModernClaim(params)) {
    if (headerModern) return headerMismatch('initialize-with-modern-header', header, 'an initialize request (legacy handshake) was sent with a modern MCP-Protocol-Version header');
    return { kind: 'legacy', reason: 'initialize' };
  }
  if (hasClaim(params)) {
    const issue = envelopeIssues(metaOf(params)!)[0];
    if (issue !== undefined) return envelopeRejection('envelope-invalid', issue);
    const claimed = claimedVersion(params)!;
    if (header !== undefined && header !== claimed) {
      return headerMismatch('header-body-version-mismatch', header, `the body envelope names protocol version ${claimed} but the MCP-Protocol-Version header names ${header}`);
    }
    if (input.methodHeader !== undefined && input.methodHeader !== method) {
      return headerMismatch('method-header-mismatch', input.methodHeader, `the body names method ${method} but the Mcp-Method header names ${input.methodHeader}`);
    }
    return { kind: 'modern', message: body, revision: claimed };
  }
  if (headerModern) {
    const meta = metaOf(params);
    const missingKeys = envelopeIssues(meta ?? {}).filter((issue) => issue.problem === 'missing').map((issue) => issue.key);
    const missing = meta === undefined ? ['_meta'] : missingKeys.length > 0 ? missingKeys : [PROTOCOL_VERSION_META_KEY];
    return reject(
      'modern-header-without-claim',
      INVALID_PARAMS,
      `Invalid params: the MCP-Protocol-Version header names protocol revision ${header}, but the request is missing the required per-request envelope key(s): ${missing.join(', ')}`,
      { envelope: { missing } },
    );
  }
  return { kind: 'legacy', reason: 'no-claim' };
}

function classifyNotification(input: EraInput, body: ModernMessage): EraVerdict {
  const { params, method } = body;
  const header = input.versionHeader;
  const methodMismatch = (): EraRejection | undefined =>
    input.methodHeader !== undefined && input.methodHeader !== method
      ? headerMismatch('notification-method-header-mismatch', input.methodHeader, `the notification body names method ${method} but the Mcp-Method header names ${input.methodHeader}`)
      : undefined;
  if (hasClaim(params)) {
    const claimed = claimedVersion(params);
    if (claimed === undefined) {
      const issue = envelopeIssues(metaOf(params)!).find((found) => found.key === PROTOCOL_VERSION_META_KEY) ?? { key: PROTOCOL_VERSION_META_KEY, problem: 'expected a protocol version string' };
      return envelopeRejection('notification-envelope-invalid', issue);
    }
    if (header !== undefined && header !== claimed) {
      return headerMismatch('notification-header-body-version-mismatch', header, `the notification envelope names protocol version ${claimed} but the MCP-Protocol-Version header names ${header}`);
    }
    return (isModernVersion(claimed) && methodMismatch()) || { kind: 'modern', message: body, revision: claimed };
  }
  if (header !== undefined && isModernVersion(header)) return methodMismatch() ?? { kind: 'modern', message: body, revision: header };
  return { kind: 'legacy', reason: 'notification' };
}

function classifyBatch(body: readonly unknown[]): EraVerdict {
  if (body.length === 0) return reject('empty-batch', INVALID_REQUEST, 'Bad Request: empty JSON-RPC batch');
  for (const element of body) {
    if (hasClaim(isPlainObject(element) ? element.params : undefined)) {
      return reject('batch-with-modern-element', INVALID_REQUEST, 'Bad Request: JSON-RPC batches may not contain requests for protocol revision 2026-07-28 or later');
    }
    const valid = isPlainObject(element) && (isRequest(element) || isNotification(element) || isResultResponse(element) || isErrorResponse(element));
    if (!valid) return reject('batch-with-invalid-element', INVALID_REQUEST, 'Bad Request: JSON-RPC batch contains an invalid message');
  }
  return { kind: 'legacy', reason: 'batch' };
}

/** The input with its headers as the checks compare them (optional whitespace dropped): made only for a single message, field by field (spreads of conditional literals cost more). */
function normalised(input: EraInput): EraInput {
  const headers: EraInput = { httpMethod: input.httpMethod, body: input.body };
  if (input.versionHeader !== undefined) headers.versionHeader = stripOws(input.versionHeader);
  if (input.methodHeader !== undefined) headers.methodHeader = stripOws(input.methodHeader);
  return headers;
}

/** The era of one /mcp request, or the refusal the modern ladder answers it with. */
export function classifyEra(input: EraInput): EraVerdict {
  if (input.httpMethod.toUpperCase() !== 'POST') return { kind: 'legacy', reason: 'http-method' };
  const body = input.body;
  if (Array.isArray(body)) return classifyBatch(body);
  if (isResultResponse(body) || isErrorResponse(body)) return { kind: 'legacy', reason: 'response' };
  if (isPlainObject(body) && isRequest(body)) return classifyRequest(normalised(input), body);
  if (isPlainObject(body) && isNotification(body)) return classifyNotification(normalised(input), body);
  return reject('invalid-json-rpc-body', INVALID_REQUEST, 'Bad Request: the request body is not a valid JSON-RPC message');
}
