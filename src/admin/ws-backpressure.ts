// Backpressure toward admin clients. Nothing is queued in JS: an event is sent
// only while the client's uWS send buffer is under `eventBufferLimit`, else it
// is counted as dropped and one {type:'dropped', count} is sent once the buffer
// drains. A client over the limit for `stallTimeoutMs` is closed with 1013.
// Results, progress and errors ("control" frames) may use the room between
// that limit and uWS's `maxBackpressure`; they are never dropped silently, so a
// client too stuck to take one is closed instead.
import type { Logger } from '../log.js';
import { ADMIN_CLOSE, type AdminServerMessage } from '../protocol/admin.js';
import type { CofferEvent } from '../protocol/events.js';
import { bufferedOf, endClient, sendRaw, type AdminClient } from './ws-client.js';
import type { AdminWsOptions } from './ws-options.js';

type Limits = Pick<AdminWsOptions, 'eventBufferLimit' | 'stallTimeoutMs'>;

export class Backpressure {
  /** Events dropped for slow clients since start. */
  dropped = 0;
  /** Sockets closed with 1013 for staying too slow. */
  closedSlow = 0;

  constructor(
    private readonly limits: Limits,
    private readonly log: Logger,
  ) {}

  /** How often sweep() should run: often enough to close a stalled client close to its timeout. */
  get sweepIntervalMs(): number {
    return Math.max(10, Math.min(1_000, Math.floor(this.limits.stallTimeoutMs / 4)));
  }

  sendControl(client: AdminClient, message: AdminServerMessage): void {
    if (!client.open) return;
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      this.log.error('admin ws: cannot serialise a message', { type: message.type, error: String(error) });
      if (message.type !== 'result') return;
      text = JSON.stringify({ type: 'result', id: message.id, ok: false, error: { code: 'INTERNAL', message: 'internal error in coffer; see the daemon log' } });
    }
    if (!sendRaw(client, text)) {
      this.log.warn('admin ws: client send buffer full, closing', { client: client.serial, type: message.type });
      endClient(client, ADMIN_CLOSE.TRY_AGAIN_LATER, 'send buffer full: the client is not reading');
    }
  }

  /** One event to every authenticated client whose filter takes it; serialised at most once. */
  deliver(clients: Iterable<AdminClient>, event: CofferEvent): void {
    let text: string | null = null;
    for (const client of clients) {
      if (!client.open || client.authError !== null || !client.ws || !client.filter.matches(event)) continue;
      const buffered = bufferedOf(client);
      if (buffered === null) continue;
      if (buffered > this.limits.eventBufferLimit) {
        this.drop(client);
        continue;
      }
      if (client.dropped > 0) this.flushDropped(client);
      text ??= JSON.stringify({ type: 'event', event } satisfies AdminServerMessage);
      if (!sendRaw(client, text)) this.drop(client);
    }
  }

  /** Reports drops to clients that caught up; closes those stalled past stallTimeoutMs. */
  sweep(clients: Iterable<AdminClient>): void {
    const now = Date.now();
    for (const client of clients) {
      if (!client.open || !client.ws || client.overSince === null) continue;
      const buffered = bufferedOf(client);
      if (buffered === null) continue;
      if (buffered <= this.limits.eventBufferLimit) {
        this.flushDropped(client);
      } else if (now - client.overSince >= this.limits.stallTimeoutMs) {
        this.closedSlow++;
        this.log.warn('admin ws: closing a client that stopped reading', { client: client.serial, dropped: client.dropped, buffered });
        endClient(client, ADMIN_CLOSE.TRY_AGAIN_LATER, `too slow: events were dropped for ${Math.round(this.limits.stallTimeoutMs / 1000)} s`);
      }
    }
  }

  /** uWS drained the socket's send buffer. */
  drained(client: AdminClient, buffered: number): void {
    if (client.dropped > 0 && buffered <= this.limits.eventBufferLimit) this.flushDropped(client);
    else if (client.dropped === 0 && buffered <= this.limits.eventBufferLimit) client.overSince = null;
  }

  private drop(client: AdminClient): void {
    client.dropped++;
    this.dropped++;
    client.overSince ??= Date.now();
  }

  private flushDropped(client: AdminClient): void {
    if (client.dropped === 0 || !client.ws) return;
    const count = client.dropped;
    client.dropped = 0;
    client.overSince = null;
    this.sendControl(client, { type: 'dropped', count });
  }
}
