// /daemon routes: status (the only route without a token), readiness and shutdown.
import type { Readiness } from '../../ops/readiness.js';
import type { AuditActor } from '../../protocol/db.js';
import type { Route } from '../http-api.js';
import { CHALLENGE_PATTERN } from '../../daemon/daemon-file.js';

export interface DaemonStatus {
  status: 'starting' | 'ready' | 'stopping';
  version: string;
  started_at: string;
  port: number;
  pid: number;
  native_http: boolean;
  upstreams: { registered: number; enabled: number; healthy: number; degraded: number };
  /** Present when the request brought a challenge. */
  proof?: string;
}

export interface DaemonControl {
  status(): Promise<DaemonStatus>;
  /** tokenProof of the challenge with the daemon's current token. */
  prove(challenge: string): string;
  /** What /readyz answers, with the upstreams' error text (the route wants the token). */
  readiness(): Readiness;
  /** Starts a graceful stop after the answer is sent. */
  requestShutdown(): void;
  /** A new token; the old one stops working at once. */
  rotateToken(actor: AuditActor): Promise<string>;
}

export function daemonRoutes(control: DaemonControl): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/daemon/status',
      public: true,
      // ?challenge=…: the answer proves the daemon holds daemon.json's token without showing it.
      handler: async (request) => {
        const challenge = request.query.get('challenge');
        const proof = challenge !== null && CHALLENGE_PATTERN.test(challenge) ? { proof: control.prove(challenge) } : {};
        return { status: 200, body: { ...(await control.status()), ...proof } };
      },
    },
    { method: 'GET', pattern: '/daemon/readiness', handler: () => ({ status: 200, body: control.readiness() }) },
    {
      method: 'POST',
      pattern: '/daemon/shutdown',
      handler: () => {
        setImmediate(() => control.requestShutdown());
        return { status: 202, body: { status: 'stopping' } };
      },
    },
    { method: 'POST', pattern: '/daemon/rotate-token', handler: async (request) => ({ status: 200, body: { token: await control.rotateToken(request.actor) } }) },
  ];
}
