// What every view gets: the API, the live events, the server list, and a way
// to report a one-line notice.
import type { Api } from './api.js';
import type { LiveEvents } from './live.js';
import type { ServerStore } from './server-store.js';

export interface ViewContext {
  api: Api;
  live: LiveEvents;
  servers: ServerStore;
}

/** A mounted view: its element, and what to undo when another view replaces it. */
export interface View {
  element: HTMLElement;
  unmount(): void;
}
