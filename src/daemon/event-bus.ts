// The daemon's event bus: one typed stream that the admin WebSocket (and the
// log) subscribe to. Publishing never blocks on a subscriber.
import { EventEmitter } from 'node:events';
import type { CofferEvent } from '../protocol/events.js';

export class EventBus {
  private readonly emitter = new EventEmitter<{ event: [CofferEvent] }>();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(event: CofferEvent): void {
    this.emitter.emit('event', event);
  }

  subscribe(listener: (event: CofferEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }
}
