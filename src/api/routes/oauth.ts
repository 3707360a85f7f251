// /servers/{name}/oauth: an HTTP/SSE upstream's sign-in. POST starts one (the
// link for a person, or signed in at once when no person is needed), GET tells
// how the last one went (or that tokens are held from an earlier run), DELETE forgets the tokens. No answer carries a token.
import type { SignIns } from '../../oauth/sign-ins.js';
import type { Route } from '../http-api.js';

export function oauthRoutes(signIns: SignIns): Route[] {
  const pattern = '/servers/:name/oauth';
  return [
    { method: 'POST', pattern, handler: async (_request, { name }) => ({ status: 200, body: await signIns.start(name!) }) },
    { method: 'GET', pattern, handler: async (_request, { name }) => ({ status: 200, body: await signIns.status(name!) }) },
    {
      method: 'DELETE',
      pattern,
      handler: async (request, { name }) => {
        await signIns.logout(name!, request.actor);
        return { status: 204 };
      },
    },
  ];
}
