// Every toolset (with its bound clients) and every client credential, kept
// current from the admin WebSocket: a toolset or binding changed anywhere
// (this page, the CLI, the config file) reads both lists again.
import type { Api } from './api.js';
import type { LiveEvents } from './live.js';
import type { ClientInfo, ToolsetInfo } from './types.js';

const RELOAD_DEBOUNCE_MS = 150;

export class ToolsetStore {
  toolsets: ToolsetInfo[] = [];
  clients: ClientInfo[] = [];
  loadError: Error | null = null;
  private readonly listeners = new Set<() => void>();
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private reloadSeq = 0;

  constructor(
    private readonly api: Api,
    live: LiveEvents,
  ) {
    live.onEvent((event) => (event.type === 'toolset' || event.type === 'client_bound') && this.scheduleReload());
    // Events missed while the socket was down: read again.
    live.onState((state) => state === 'live' && this.scheduleReload());
  }

  get(name: string): ToolsetInfo | undefined {
    return this.toolsets.find((toolset) => toolset.name === name);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads both lists; only the last reload started applies its answer (they land in any order). */
  async reload(): Promise<void> {
    clearTimeout(this.reloadTimer);
    const seq = ++this.reloadSeq;
    const answer = await Promise.all([this.api.get<{ toolsets: ToolsetInfo[] }>('/toolsets'), this.api.get<{ clients: ClientInfo[] }>('/clients')]).then(
      ([toolsets, clients]) => ({ toolsets: toolsets.toolsets, clients: clients.clients }),
      (error: Error) => error,
    );
    if (seq !== this.reloadSeq) return;
    if (answer instanceof Error) this.loadError = answer;
    else {
      this.toolsets = answer.toolsets;
      this.clients = answer.clients;
      this.loadError = null;
    }
    for (const listener of this.listeners) listener();
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => void this.reload(), RELOAD_DEBOUNCE_MS);
  }
}
