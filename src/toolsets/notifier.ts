// list_changed, exact per view: sessions of the whole surface get every one as
// before; a toolset session gets one only when its own list of that kind is no
// longer what it last listed (a change elsewhere, or a switch outside its set,
// says nothing to it).
import type { JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import type { McpSession } from '../mcp/session.js';
import { KINDS_CHANGED_BY, LIST_CHANGED_METHOD, PRIMARY_KINDS } from '../protocol/capabilities.js';
import type { ViewLists } from './view-lists.js';

type Broadcast = (notification: JSONRPCNotification, to?: (session: McpSession) => boolean) => void;

export class ViewNotifier {
  constructor(
    private readonly lists: ViewLists,
    private readonly send: Broadcast,
    private readonly log: Logger,
  ) {}

  broadcast(notification: JSONRPCNotification): void {
    if (!KINDS_CHANGED_BY[notification.method]) return this.send(notification);
    this.send(notification, (session) => session.toolset === null);
    this.tellStale(notification.method);
  }

  /** A toolset changed: its sessions are told of each kind whose list differs now. */
  toolsetChanged(): void {
    for (const kind of PRIMARY_KINDS) this.tellStale(LIST_CHANGED_METHOD[kind]);
  }

  private tellStale(method: string): void {
    this.lists
      .stale(KINDS_CHANGED_BY[method]!)
      .then((stale) => stale.size > 0 && this.send({ jsonrpc: '2.0', method }, (session) => stale.has(session)))
      .catch((error: unknown) => this.log.warn('list_changed for toolset sessions not sent', { method, error: String(error) }));
  }
}
