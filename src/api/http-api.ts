// The REST management API as plain request → response handlers, independent
// of uWS: the HTTP adapter parses, this module routes, authenticates and shapes
// every error into the one envelope.
import { bearerToken, tokenMatches } from '../http/bearer.js';
import type { AuditActor } from '../protocol/db.js';
import { CofferError, ERROR_HTTP_STATUS, type ErrorBody } from '../protocol/errors.js';

export interface ApiRequest {
  method: string;
  /** Path below /api/v1, e.g. /servers/files. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: unknown;
}

/** What a route handler sees: the request plus who is asking, for the audit log. */
export type RouteRequest = ApiRequest & { actor: AuditActor };

export interface ApiResponse {
  status: number;
  body?: unknown;
}

export type ApiHandler = (request: RouteRequest, params: Record<string, string>) => Promise<ApiResponse> | ApiResponse;

export interface Route {
  method: string;
  /** Segments; `:name` captures one (percent-decoded). */
  pattern: string;
  public?: boolean;
  handler: ApiHandler;
}

export function errorResponse(body: ErrorBody): ApiResponse {
  return { status: ERROR_HTTP_STATUS[body.code], body: { error: body } };
}

/** The CLI and the web UI name themselves in X-Coffer-Actor; anything else is the API. */
export function actorOf(headers: Record<string, string>): AuditActor {
  const claimed = headers['x-coffer-actor'];
  return claimed === 'cli' || claimed === 'ui' ? claimed : 'api';
}

export function presentedToken(headers: Record<string, string>): string | undefined {
  return bearerToken(headers['authorization']) ?? headers['x-coffer-token'];
}

function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment.startsWith(':')) {
      try {
        params[segment.slice(1)] = decodeURIComponent(have[i]!);
      } catch {
        return null;
      }
    } else if (segment !== have[i]) return null;
  }
  return params;
}

/** The body a public route takes (a login code): an unauthenticated client cannot make the daemon hold more. */
export const PUBLIC_MAX_BODY_BYTES = 4096;

/** Whether a request's body is wanted: no, with its answer (no such route, no token); yes, with how much of one its route takes. */
export type Admission = { ok: false; answer: ApiResponse } | { ok: true; maxBodyBytes: number | null };

type RequestHead = Pick<ApiRequest, 'method' | 'path' | 'headers'>;

export class HttpApi {
  constructor(
    private readonly routes: Route[],
    private readonly token: () => string,
  ) {}

  /**
   * Asked before the body is read, so that a client without the token uploads nothing.
   * `maxBodyBytes` null: the server's own limit.
   */
  admit(head: RequestHead): Admission {
    const found = this.resolve(head);
    if (!('route' in found)) return { ok: false, answer: found };
    return { ok: true, maxBodyBytes: found.route.public ? PUBLIC_MAX_BODY_BYTES : null };
  }

  async handle(request: ApiRequest): Promise<ApiResponse> {
    // The token is checked again: it may have been rotated while the body arrived.
    const found = this.resolve(request);
    if (!('route' in found)) return found;
    try {
      return await found.route.handler({ ...request, actor: actorOf(request.headers) }, found.params);
    } catch (error) {
      if (error instanceof CofferError) return errorResponse(error.toBody());
      throw error;
    }
  }

  /** The route a request goes to and its captured segments, or the answer when none takes it or the token is missing. */
  private resolve(head: RequestHead): { route: Route; params: Record<string, string> } | ApiResponse {
    let pathMatched = false;
    for (const route of this.routes) {
      const params = match(route.pattern, head.path);
      if (!params) continue;
      pathMatched = true;
      if (route.method !== head.method) continue;
      if (!route.public && !tokenMatches(presentedToken(head.headers), this.token())) {
        return errorResponse({ code: 'UNAUTHENTICATED', message: "missing or wrong token: send 'Authorization: Bearer <token>' with the token from daemon.json" });
      }
      return { route, params };
    }
    return pathMatched
      ? errorResponse({ code: 'METHOD_NOT_ALLOWED', message: `${head.method} is not supported on ${head.path}` })
      : errorResponse({ code: 'RESOURCE_NOT_FOUND', message: `no route ${head.method} /api/v1${head.path}` });
  }
}
