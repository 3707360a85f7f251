// Legacy SSE: GET /sse for the endpoint, then every message on that stream and
// each request POSTed to the endpoint.
import type { Http1Request, Http1Response } from './http1.js';
import type { JsonRpcMessage } from './jsonrpc-session.js';
import { addTraceHeaders } from './trace-headers.js';
import type { HttpAuth } from './http-auth.js';
import { asError, errorText, readSse } from './http-bodies.js';
import { HttpTransportBase, parts } from './http-base.js';
import { quotedText } from '../../src/protocol/untrusted-text.js';

/** How much of an invalid endpoint event its error quotes. */
const MAX_ENDPOINT_QUOTE_CHARS = 256;

export class LegacySseTransport extends HttpTransportBase {
  private endpoint: URL | undefined;

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      let started = false;
      const fail = (error: Error): void => {
        if (!started) {
          started = true;
          reject(error);
          return;
        }
        if (this.closed) return;
        // Every answer comes on this stream: without it the session is over.
        this.report(error);
        void this.close();
      };
      const headers = this.commonHeaders();
      headers.accept = 'text/event-stream';
      this.exchange('GET', this.url, headers)
        .then(async (res) => {
          const status = res.statusCode;
          if (status < 200 || status >= 300) {
            res.resume();
            throw new Error(`SSE error: Non-200 status code (${status})`);
          }
          await readSse(res, (event) => {
            if (event.event === 'endpoint') {
              if (started) return;
              let endpoint: URL;
              try {
                // An empty reference would resolve to the stream's own URL: a server that names no endpoint has none.
                if (event.data.trim() === '') throw new Error('empty');
                endpoint = new URL(event.data, this.url);
              } catch {
                // Quoted from a cut: the event may be as large as any message, and only its start says what it was.
                fail(new Error(`SSE error: invalid endpoint ${quotedText(event.data, MAX_ENDPOINT_QUOTE_CHARS)}`));
                return;
              }
              if (endpoint.origin !== this.url.origin) {
                fail(new Error(`Endpoint origin does not match connection origin: ${endpoint.origin}`));
                return;
              }
              this.endpoint = endpoint;
              started = true;
              resolve();
            } else this.sseMessage(event);
          }, (error) => this.report(error));
          throw new Error('SSE stream disconnected');
        })
        .catch((error: unknown) => fail(asError(error)));
    });
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (!this.endpoint) throw new Error('Not connected');
    const headers = this.commonHeaders();
    headers['content-type'] = 'application/json';
    addTraceHeaders(headers, message);
    let res: Http1Response;
    let request: Http1Request | undefined;
    try {
      // The POST's own answer is an acknowledgement only (answers come on the stream): it is not waited for past lingerMs.
      res = await this.exchange('POST', this.endpoint, headers, { body: () => JSON.stringify(message), onRequest: (req) => this.letGo((request = req)), brief: true });
    } catch (error) {
      // Not acknowledged in time: a request's answer may still come on the stream, within the request's own deadline.
      if (request !== undefined && this.cutOff.has(request)) return;
      const failure = this.postFailure(error, 'SSE');
      this.report(failure);
      throw failure;
    }
    const status = res.statusCode;
    if (status < 200 || status >= 300) {
      const text = await errorText(res);
      const failure = new Error(`Error POSTing to endpoint (HTTP ${status}): ${text}`);
      this.report(failure);
      throw failure;
    }
    res.resume();
  }
}

export async function createLegacySse(url: string, headers: Record<string, string>, auth: HttpAuth | null = null): Promise<LegacySseTransport> {
  return new LegacySseTransport(...(await parts(url)), headers, auth);
}
