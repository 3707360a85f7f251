// Which era a message from the shim's client belongs to, by the daemon's own
// classifier (one ladder for /mcp and stdio): a request carrying the
// 2026-07-28 envelope goes to the daemon as a POST of its own, everything
// else through the relay's 2025 session. A message the modern ladder refuses
// is answered here as /mcp would answer it; a malformed body that owes
// nothing to the modern era goes on to the session, as it always did. Pure.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { classifyEra, SHAPE_ONLY_CELLS } from '../mcp/era.js';

export type EraRoute =
  | { era: 'legacy' }
  | { era: 'modern'; revision: string | undefined }
  | { era: 'refused'; error: { code: number; message: string; data?: unknown } };

export function routeOf(message: JSONRPCMessage): EraRoute {
  const verdict = classifyEra({ httpMethod: 'POST', body: message });
  if (verdict.kind === 'modern') return { era: 'modern', revision: verdict.revision };
  if (verdict.kind === 'reject' && !SHAPE_ONLY_CELLS.has(verdict.cell)) {
    const { code, message: text, data } = verdict;
    return { era: 'refused', error: data === undefined ? { code, message: text } : { code, message: text, data } };
  }
  return { era: 'legacy' };
}
