// A small Node client of the admin WebSocket (the `ws` package: Node 20 has no
// global WebSocket). Used by `coffer mcp refresh` for progress, and by tests.
//
//   const admin = await connectAdmin({ port, token });
//   admin.onProgress((p) => console.error(p.message));
//   const result = await admin.request({ type: 'refresh', server: 'files' });
//   if (!result.ok) ... result.error.code ...
//   await admin.close();
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import {
  ADMIN_CLOSE,
  ADMIN_PATH,
  ADMIN_SUBPROTOCOL,
  type AdminCommand,
  type AdminServerMessage,
  type DroppedMessage,
  type ProgressMessage,
  type ResultMessage,
} from '../protocol/admin.js';
import type { CofferEvent } from '../protocol/events.js';

export interface AdminClientOptions {
  port: number;
  token: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Connect + authentication handshake. Default 5 s. */
  connectTimeoutMs?: number;
}

/** A command without its id (the client picks one), or with one of the caller's. */
export type AdminRequest = AdminCommand extends infer C ? (C extends { id: string } ? Omit<C, 'id'> & { id?: string } : never) : never;

export interface RequestOptions {
  /** Progress of this request only. */
  onProgress?: (progress: ProgressMessage) => void;
  /** Rejects with AdminConnectionError code 'TIMEOUT' after this long; default none. */
  timeoutMs?: number;
}

/**
 * The socket failed or closed: `code` is the WebSocket close code (4401 wrong
 * token, 1001 daemon stopping, 1013 too slow, …), 'ECONNREFUSED' and the like
 * when the daemon is unreachable, 'HTTP_<status>' for a refused upgrade, or 'TIMEOUT'.
 */
export class AdminConnectionError extends Error {
  constructor(
    readonly code: number | string,
    message: string,
  ) {
    super(message);
    this.name = 'AdminConnectionError';
  }

  /** True when the daemon is not there at all (the CLI's exit code 3). */
  get unreachable(): boolean {
    return this.code === 'ECONNREFUSED' || this.code === 'ECONNRESET' || this.code === 'EHOSTUNREACH';
  }
}

export interface AdminClient {
  /** Sends a command; resolves with its result (ok or not). A frame the server rejected resolves as ok:false with its error. */
  request(command: AdminRequest, options?: RequestOptions): Promise<ResultMessage>;
  onEvent(listener: (event: CofferEvent) => void): () => void;
  onProgress(listener: (progress: ProgressMessage) => void): () => void;
  onDropped(listener: (message: DroppedMessage) => void): () => void;
  /** Resolves once the socket is closed, with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

interface Pending {
  resolve(result: ResultMessage): void;
  reject(error: Error): void;
  onProgress?: (progress: ProgressMessage) => void;
  timer?: NodeJS.Timeout;
}

export function connectAdmin(options: AdminClientOptions): Promise<AdminClient> {
  const host = options.host ?? '127.0.0.1';
  const ws = new WebSocket(`ws://${host}:${options.port}${ADMIN_PATH}`, [ADMIN_SUBPROTOCOL], {
    headers: { authorization: `Bearer ${options.token}` },
    handshakeTimeout: options.connectTimeoutMs ?? 5_000,
    maxPayload: 256 * 1024 * 1024,
  });
  const pending = new Map<string, Pending>();
  const eventListeners = new Set<(event: CofferEvent) => void>();
  const progressListeners = new Set<(progress: ProgressMessage) => void>();
  const droppedListeners = new Set<(message: DroppedMessage) => void>();
  let closeError: AdminConnectionError | null = null;
  let resolveClosed!: (value: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (resolveClosed = resolve));

  const failAll = (error: AdminConnectionError) => {
    closeError ??= error;
    for (const [id, entry] of pending) {
      pending.delete(id);
      if (entry.timer) clearTimeout(entry.timer);
      entry.reject(error);
    }
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    let message: AdminServerMessage;
    try {
      message = JSON.parse(data.toString()) as AdminServerMessage;
    } catch {
      return;
    }
    switch (message.type) {
      case 'event':
        for (const listener of eventListeners) listener(message.event);
        return;
      case 'progress': {
        pending.get(message.id)?.onProgress?.(message);
        for (const listener of progressListeners) listener(message);
        return;
      }
      case 'dropped':
        for (const listener of droppedListeners) listener(message);
        return;
      case 'result':
      case 'error': {
        if (message.id === undefined) return;
        const entry = pending.get(message.id);
        if (!entry) return;
        pending.delete(message.id);
        if (entry.timer) clearTimeout(entry.timer);
        entry.resolve(message.type === 'result' ? message : { type: 'result', id: message.id, ok: false, error: message.error });
        return;
      }
    }
  });

  ws.on('close', (code, reason) => {
    const text = reason.toString();
    const describe = code === ADMIN_CLOSE.UNAUTHENTICATED ? `coffer refused the token: ${text}` : `admin connection closed (${code}${text ? `: ${text}` : ''})`;
    failAll(new AdminConnectionError(code, describe));
    resolveClosed({ code, reason: text });
  });

  const client: AdminClient = {
    request(command, requestOptions = {}) {
      if (closeError) return Promise.reject(closeError);
      const id = command.id ?? randomUUID();
      if (pending.has(id)) return Promise.reject(new Error(`request id '${id}' is already pending`));
      return new Promise<ResultMessage>((resolve, reject) => {
        const entry: Pending = { resolve, reject, onProgress: requestOptions.onProgress };
        if (requestOptions.timeoutMs !== undefined) {
          entry.timer = setTimeout(() => {
            pending.delete(id);
            reject(new AdminConnectionError('TIMEOUT', `no answer to '${command.type}' within ${requestOptions.timeoutMs} ms`));
          }, requestOptions.timeoutMs);
        }
        pending.set(id, entry);
        ws.send(JSON.stringify({ ...command, id }), (error) => {
          if (!error || !pending.has(id)) return;
          pending.delete(id);
          if (entry.timer) clearTimeout(entry.timer);
          reject(new AdminConnectionError('ESEND', `cannot send to coffer: ${error.message}`));
        });
      });
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onProgress(listener) {
      progressListeners.add(listener);
      return () => progressListeners.delete(listener);
    },
    onDropped(listener) {
      droppedListeners.add(listener);
      return () => droppedListeners.delete(listener);
    },
    closed,
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      if (ws.readyState !== WebSocket.CLOSING) ws.close(1000, 'bye');
      const timer = setTimeout(() => ws.terminate(), 2_000);
      await closed;
      clearTimeout(timer);
    },
  };

  return new Promise<AdminClient>((resolve, reject) => {
    let settled = false;
    const fail = (error: AdminConnectionError) => {
      if (settled) return;
      settled = true;
      ws.terminate();
      reject(error);
    };
    ws.once('unexpected-response', (_request, response) => {
      response.resume();
      fail(new AdminConnectionError(`HTTP_${response.statusCode}`, `coffer refused the admin connection: HTTP ${response.statusCode}`));
    });
    ws.once('error', (error: NodeJS.ErrnoException) => {
      fail(new AdminConnectionError(error.code ?? 'ECONNECT', `cannot reach coffer at ${host}:${options.port}: ${error.message}`));
    });
    ws.on('error', () => undefined);
    void closed.then(({ code, reason }) => fail(new AdminConnectionError(code, code === ADMIN_CLOSE.UNAUTHENTICATED ? `coffer refused the token: ${reason}` : `admin connection closed (${code}) ${reason}`)));
    ws.once('open', () => {
      // The server closes a bad token right after the upgrade: a ping round trip proves we are in.
      client.request({ type: 'ping' }, { timeoutMs: options.connectTimeoutMs ?? 5_000 }).then(
        (result) => {
          if (settled) return;
          if (!result.ok) return fail(new AdminConnectionError(result.error.code, result.error.message));
          settled = true;
          resolve(client);
        },
        (error: AdminConnectionError) => fail(error),
      );
    });
  });
}
