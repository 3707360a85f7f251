// Keep-alive sockets to one origin, for the actor's HTTP exchanges (http1.ts):
// reused while idle, opened up to a cap, and past it a queue of requests
// waiting their turn, itself capped, so an upstream cannot make its actor
// open sockets without bound.
import { connect, isIP, type Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { JSONRPC } from '../../src/protocol/errors.js';
import { Connection, Http1Request, requestMessage, type Http1Headers } from './http1.js';
import { RpcError } from './jsonrpc-session.js';
import { MAX_REQUESTS_WAITING, MAX_SOCKETS_PER_UPSTREAM, SOCKETS_KEPT_FOR_BRIEF } from './limits.js';

/** A request not sent: every socket the pool may open is busy, and as many requests wait for one as may. */
export class PoolFullError extends RpcError {
  constructor(sockets: number, waiting: number) {
    const message = `${sockets} requests to the upstream are open and ${waiting} more wait for a socket: this one was not sent; retry when earlier calls have finished`;
    super(JSONRPC.UPSTREAM_BUSY, message, { code: 'UPSTREAM_BUSY' });
  }
}

/**
 * Keep-alive sockets to one origin: an idle one is reused (the latest first), a
 * new one opened when all are busy, up to `maxSockets`; past it a request waits
 * for a socket, up to `maxWaiting` of them. Requests that are not brief hold at
 * most `maxSockets - keptForBrief` at once, so a brief one (a reply the calls
 * in flight may be waiting on) always finds a socket soon.
 */
export class Http1Pool {
  private readonly free: Connection[] = [];
  private readonly busy = new Set<Connection>();
  /** Those of `busy` serving a request that is not brief. */
  private readonly busyLong = new Set<Connection>();
  /** Requests waiting for a socket, first come first served; one destroyed meanwhile leaves. */
  private readonly waiting: Http1Request[] = [];
  private closed = false;

  constructor(
    private readonly open: () => Socket,
    private readonly host: string,
    private readonly maxSockets = MAX_SOCKETS_PER_UPSTREAM,
    private readonly maxWaiting = MAX_REQUESTS_WAITING,
    private readonly keptForBrief = SOCKETS_KEPT_FOR_BRIEF,
  ) {}

  /** Sends the request now, or once a socket is free; throws on a header node:http would refuse, and PoolFullError when too many wait. */
  request(method: string, url: URL, headers: Http1Headers, body?: string, brief = false): Http1Request {
    if (this.closed) throw new Error('Not connected');
    const request = new Http1Request(requestMessage(method, url, this.host, headers, body), method === 'GET' || method === 'DELETE', brief);
    if (this.canStart(request)) this.start(request, this.free.pop() ?? this.connect());
    else if (this.waiting.length >= this.maxWaiting) throw new PoolFullError(this.maxSockets, this.maxWaiting);
    else this.wait(request);
    return request;
  }

  /** @internal A second attempt on a new socket (at the cap: first of the requests waiting); false once the pool is closed. */
  retry(request: Http1Request): boolean {
    if (this.closed) return false;
    if (this.busy.size < this.maxSockets && this.classAllows(request)) this.start(request, this.connect());
    else this.wait(request, true);
    return true;
  }

  /** @internal */
  idle(connection: Connection): void {
    this.leave(connection);
    if (this.closed) return connection.close();
    connection.socket.unref();
    this.free.push(connection);
    this.next();
  }

  /** @internal */
  forget(connection: Connection): void {
    this.leave(connection);
    const at = this.free.indexOf(connection);
    if (at >= 0) this.free.splice(at, 1);
    this.next();
  }

  /** Closes every socket; requests in flight or waiting fail. */
  close(): void {
    this.closed = true;
    for (const request of [...this.waiting]) request.destroy();
    for (const connection of [...this.free, ...this.busy]) connection.close();
  }

  private leave(connection: Connection): void {
    this.busy.delete(connection);
    this.busyLong.delete(connection);
  }

  /** A socket is free, or another may be opened. */
  private hasRoom(): boolean {
    return this.free.length > 0 || this.busy.size < this.maxSockets;
  }

  private canStart(request: Http1Request): boolean {
    return this.hasRoom() && this.classAllows(request);
  }

  private classAllows(request: Http1Request): boolean {
    return request.brief || this.busyLong.size < this.maxSockets - this.keptForBrief;
  }

  private wait(request: Http1Request, first = false): void {
    if (first) this.waiting.unshift(request);
    else this.waiting.push(request);
    request.once('close', () => {
      const at = this.waiting.indexOf(request);
      if (at >= 0) this.waiting.splice(at, 1);
    });
  }

  /** Starts the requests waiting, first come first served as far as sockets allow (a brief one may pass those that must wait). */
  private next(): void {
    for (let at = 0; !this.closed && at < this.waiting.length && this.hasRoom(); ) {
      const request = this.waiting[at]!;
      if (!this.classAllows(request)) at += 1;
      else this.start(this.waiting.splice(at, 1)[0]!, this.free.pop() ?? this.connect());
    }
  }

  private start(request: Http1Request, connection: Connection): void {
    this.busy.add(connection);
    if (!request.brief) this.busyLong.add(connection);
    connection.socket.ref();
    connection.start(request);
  }

  private connect(): Connection {
    return new Connection(this.open(), this);
  }
}

/** A pool for `url`'s origin; node:tls is loaded only for https. */
export async function http1Pool(url: URL, tlsOptions: ConnectionOptions = {}): Promise<Http1Pool> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (url.protocol !== 'https:') {
    const port = Number(url.port || 80);
    return new Http1Pool(() => connect({ host, port }), url.host);
  }
  const tls = await import('node:tls');
  const port = Number(url.port || 443);
  const servername = isIP(host) ? undefined : host;
  return new Http1Pool(() => tls.connect({ host, port, servername, ALPNProtocols: ['http/1.1'], ...tlsOptions }), url.host);
}
