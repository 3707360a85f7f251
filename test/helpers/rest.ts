// The REST API of a test daemon: one authenticated call, and waiting for a server to be ready.
import { readDaemonFile } from '../../src/daemon/daemon-file.js';
import { waitFor } from './wait.js';

/** One REST call: the status and the parsed JSON body (undefined when empty). `token` null sends no Authorization header. */
export type RestCall = (method: string, path: string, body?: unknown, token?: string | null) => Promise<{ status: number; body: any }>;

/** A call to the REST API of the daemon at `url` (http://127.0.0.1:PORT); `timeoutMs` aborts it. */
export async function restCall(url: string, token: string | null, method: string, path: string, body?: unknown, timeoutMs?: number): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${url}/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * The REST API of the daemon of `home`, with the port and token of its
 * daemon.json read at every call (a restart or a token rotation changes them).
 */
export function homeApi(home: string): RestCall {
  return async (method, path, body, token) => {
    const file = readDaemonFile(home);
    if (file === null) throw new Error(`no daemon.json in ${home}`);
    return restCall(`http://127.0.0.1:${file.port}`, token === undefined ? file.token : token, method, path, body);
  };
}

/** Polls GET /servers/{name} until its actor is ready (60 s: several fixture processes starting at once on a loaded 2-core machine have needed more than 30). */
export async function waitReady(api: RestCall, name: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(`${name} ready`, async () => (await api('GET', `/servers/${name}`)).body?.health?.state === 'ready', timeoutMs);
}
