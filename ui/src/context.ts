// What every view gets: the API, the live events, the server list and the
// toolsets with their clients.
import type { Api } from './api.js';
import type { LiveEvents } from './live.js';
import type { ServerStore } from './server-store.js';
import type { ToolsetStore } from './toolset-store.js';

export interface ViewContext {
  api: Api;
  live: LiveEvents;
  servers: ServerStore;
  toolsets: ToolsetStore;
}

/** A mounted view: its element, and what to undo when another view replaces it. */
export interface View {
  element: HTMLElement;
  unmount(): void;
}
