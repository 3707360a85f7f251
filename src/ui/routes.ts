// The web UI's two API routes (under /api/v1): a one-time login code issued
// to a token holder (`coffer ui`), and its redemption by the page, which
// answers the token. The code travels in the link's fragment and in this
// POST body only: never in a URL the daemon sees or logs.
import { CofferError } from '../protocol/errors.js';
import type { Route } from '../api/http-api.js';
import type { LoginCodes } from './login-codes.js';

export const LOGIN_CODE_PATH = '/ui/login-codes';
export const LOGIN_PATH = '/ui/login';

const SPENT_MESSAGE = "this login link was already used or has expired: run 'coffer ui' for a new one";

export function uiRoutes(codes: LoginCodes, token: () => string): Route[] {
  return [
    { method: 'POST', pattern: LOGIN_CODE_PATH, handler: () => ({ status: 201, body: codes.issue(token()) }) },
    {
      method: 'POST',
      pattern: LOGIN_PATH,
      public: true,
      handler: (request) => {
        const code = (request.body as { code?: unknown } | undefined)?.code;
        if (typeof code !== 'string' || code.length === 0 || code.length > 256) {
          throw new CofferError('BAD_REQUEST', 'send {"code": "<the code after #login= in the link>"}');
        }
        if (!codes.redeem(code, token())) throw new CofferError('UNAUTHENTICATED', SPENT_MESSAGE);
        return { status: 200, body: { token: token() } };
      },
    },
  ];
}
