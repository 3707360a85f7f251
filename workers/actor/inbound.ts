// The first thing done to every upstream message text (a stdio line, an HTTP
// body, an SSE event): JSON.parse, unless the text nests past MAX_PARSE_DEPTH.
// Such a response still ends its request, with an error the transports deliver
// in its place; anything else that deep is refused whole.
import { JSONRPC } from '../../src/protocol/errors.js';
import { ProtocolNoise, type JsonRpcMessage } from './jsonrpc-session.js';
import { MAX_PARSE_DEPTH } from './limits.js';
import { MAX_DEPTH } from '../../src/protocol/message-limit.js';
import { textDepth, topLevel } from '../../src/protocol/nesting.js';

/** Says nothing about the transport: the connection is not probed for it. */
export class TooDeepError extends ProtocolNoise {
  constructor(what: string, limit: number) {
    super(`${what} nests deeper than ${limit} levels and was refused`);
    this.name = 'TooDeepError';
  }
}

/** The JSON-RPC error a transport delivers in place of an upstream answer that will not come as sent, with data.code. */
export function answerError<Code extends 'UPSTREAM_RESPONSE_INVALID' | 'UPSTREAM_UNAVAILABLE'>(code: Code, message: string): { code: number; message: string; data: { code: Code } } {
  return { code: JSONRPC[code], message, data: { code } };
}

/** The JSON-RPC error that stands for an upstream answer coffer refused. */
export function invalidResponse(message: string): { code: number; message: string; data: { code: 'UPSTREAM_RESPONSE_INVALID' } } {
  return answerError('UPSTREAM_RESPONSE_INVALID', message);
}

/**
 * Parses one upstream message text. Throws SyntaxError for text that is not
 * JSON, TooDeepError for a message too deep to parse that is not a response;
 * a response that deep becomes an error response with the same id.
 */
export function parseInbound(text: string): unknown {
  // Text can nest no deeper than it has characters: most messages skip the scan, which costs more than the parse in a cold actor.
  if (text.length <= MAX_PARSE_DEPTH || textDepth(text, MAX_PARSE_DEPTH) <= MAX_PARSE_DEPTH) return JSON.parse(text);
  const { id, hasMethod } = topLevel(text);
  if (id === undefined || hasMethod) throw new TooDeepError('an upstream message', MAX_PARSE_DEPTH);
  const refused = new TooDeepError('the upstream answer', MAX_DEPTH);
  return { jsonrpc: '2.0', id, error: invalidResponse(refused.message) } satisfies JsonRpcMessage;
}
