// The one reader of `Authorization: Bearer <token>`, for REST, the admin
// WebSocket and /mcp alike, and the constant-time check of a presented token.
// The scheme is case-insensitive (RFC 9110 §11.1).
import { timingSafeEqual } from 'node:crypto';

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/** The token of an `Authorization` header value, or undefined if it is not a Bearer credential. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return BEARER.exec(authorization)?.[1];
}

/** `WWW-Authenticate` of every 401 coffer sends. */
export const BEARER_CHALLENGE = 'Bearer realm="coffer"';

/** Constant-time: the comparison does not reveal how much of a guess was right. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
