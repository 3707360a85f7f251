// The operations endpoints a supervisor or a scraper polls: /healthz (the
// process answers; no auth, no work), /readyz (can coffer serve as configured;
// the Host check as everywhere, no token so probes need none, upstream error
// text only for a token holder) and /metrics (Prometheus text, the API token
// unless the operator opted out).
import { presentedToken } from '../api/http-api.js';
import type { Readiness } from '../ops/readiness.js';
import { readRequest, ResponseState, sendBuffered, type IncomingRequest } from './bridge.js';
import { BEARER_CHALLENGE, tokenMatches } from './bearer.js';
import type { HttpResponse, TemplatedApp } from './uws.js';

export interface OpsEndpoints {
  readiness(withDetail: boolean): Readiness;
  /** Null when metrics are not served. render() has logged why when it fails. */
  metrics: { requireToken: boolean; contentType: string; render(): Promise<string> } | null;
  token(): string;
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };
/** Fixed bytes: a liveness probe costs one write. */
const HEALTHY = JSON.stringify({ status: 'ok' });

const errorBody = (code: string, message: string): string => JSON.stringify({ error: { code, message } });

const authorised = (incoming: IncomingRequest, token: string): boolean => tokenMatches(presentedToken(incoming.headers), token);

export function registerOpsRoutes(app: TemplatedApp, endpoints: OpsEndpoints, guard: (state: ResponseState, incoming: IncomingRequest) => boolean): void {
  app.get('/healthz', (res: HttpResponse) => {
    res.cork(() => {
      res.writeStatus('200 OK');
      for (const [key, value] of Object.entries(JSON_HEADERS)) res.writeHeader(key, value);
      res.end(HEALTHY);
    });
  });

  app.get('/readyz', (res: HttpResponse, req) => {
    const state = new ResponseState(res);
    const incoming = readRequest(req);
    if (!guard(state, incoming)) return;
    const answer = endpoints.readiness(authorised(incoming, endpoints.token()));
    sendBuffered(state, answer.status === 'ready' ? 200 : 503, JSON_HEADERS, JSON.stringify(answer));
  });

  app.get('/metrics', (res: HttpResponse, req) => {
    const state = new ResponseState(res);
    const incoming = readRequest(req);
    if (!guard(state, incoming)) return;
    const metrics = endpoints.metrics;
    if (metrics === null) return sendBuffered(state, 404, JSON_HEADERS, errorBody('RESOURCE_NOT_FOUND', 'metrics are off'));
    if (metrics.requireToken && !authorised(incoming, endpoints.token())) {
      const message = "missing or wrong token: send 'Authorization: Bearer <token>' with the token from daemon.json, or start coffer with COFFER_METRICS_AUTH=none";
      return sendBuffered(state, 401, { ...JSON_HEADERS, 'www-authenticate': BEARER_CHALLENGE }, errorBody('UNAUTHENTICATED', message));
    }
    metrics.render().then(
      (text) => sendBuffered(state, 200, { 'content-type': metrics.contentType }, text),
      // The reason stays in the daemon log: it may quote anything, and without the token anyone on 127.0.0.1 may ask.
      () => sendBuffered(state, 500, JSON_HEADERS, errorBody('INTERNAL', 'metrics could not be collected: the daemon log ($COFFER_HOME/logs/daemon.log) says why')),
    );
  });
}
