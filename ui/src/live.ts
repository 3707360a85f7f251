// The admin WebSocket (/admin/ws) from the page: live events for the views,
// reconnecting with a growing delay. A browser cannot set headers, so the
// token rides in the subprotocol list (the server echoes only `coffer.v1`).
import { ADMIN_CLOSE, ADMIN_PATH, ADMIN_SUBPROTOCOL, ADMIN_TOKEN_SUBPROTOCOL_PREFIX, type AdminServerMessage } from '../../src/protocol/admin.js';
import type { CofferEvent } from '../../src/protocol/events.js';

export type LinkState = 'connecting' | 'live' | 'offline';

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

export class LiveEvents {
  private socket: WebSocket | null = null;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly eventListeners = new Set<(event: CofferEvent) => void>();
  private readonly stateListeners = new Set<(state: LinkState) => void>();
  state: LinkState = 'connecting';

  constructor(
    private readonly token: string,
    private readonly onUnauthenticated: () => void,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.setState('connecting');
    const socket = new WebSocket(`ws://${location.host}${ADMIN_PATH}`, [ADMIN_SUBPROTOCOL, `${ADMIN_TOKEN_SUBPROTOCOL_PREFIX}${this.token}`]);
    this.socket = socket;
    socket.onopen = () => {
      this.retryMs = RETRY_FIRST_MS;
      this.setState('live');
    };
    socket.onmessage = (message) => {
      const parsed = JSON.parse(String(message.data)) as AdminServerMessage;
      if (parsed.type === 'event') for (const listener of this.eventListeners) listener(parsed.event);
    };
    socket.onclose = (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.setState('offline');
      if (close.code === ADMIN_CLOSE.UNAUTHENTICATED) return this.onUnauthenticated();
      this.retryTimer = setTimeout(() => this.start(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    };
  }

  /** The session ended: close the socket and never reconnect (its token is no longer good). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const socket = this.socket;
    // Cleared first: the close that follows is ours, not a reason to reconnect.
    this.socket = null;
    socket?.close();
    this.eventListeners.clear();
    this.stateListeners.clear();
  }

  onEvent(listener: (event: CofferEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onState(listener: (state: LinkState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private setState(state: LinkState): void {
    this.state = state;
    for (const listener of this.stateListeners) listener(state);
  }
}
