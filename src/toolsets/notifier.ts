// list_changed, exact per view and the same in both eras: sessions and modern
// listens of the whole surface get every one; those of a toolset get one only
// when their own list of that kind is no longer what they last saw (a change
// elsewhere, or a switch outside the set, says nothing to them).
import type { JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import { KINDS_CHANGED_BY, LIST_CHANGED_METHOD, PRIMARY_KINDS, type ListKind } from '../protocol/capabilities.js';
import type { ViewLists, ViewSession } from './view-lists.js';

type Broadcast = (notification: JSONRPCNotification, to?: (session: ViewSession) => boolean) => void;

export class ViewNotifier {
  constructor(
    private readonly lists: ViewLists,
    private readonly send: Broadcast,
    private readonly log: Logger,
  ) {}

  broadcast(notification: JSONRPCNotification): void {
    if (!KINDS_CHANGED_BY[notification.method]) return this.send(notification);
    this.send(notification, (session) => session.toolset === null);
    this.tellStale(notification.method, true);
  }

  /** A toolset changed: its sessions are told of each kind whose list differs now. */
  toolsetChanged(): void {
    for (const kind of PRIMARY_KINDS) this.tellStale(LIST_CHANGED_METHOD[kind], true);
  }

  /** A session's list was gathered across a change (ViewLists): it is told if what it got is not what is there now. */
  listedAcrossChange(kind: ListKind): void {
    this.tellStale(LIST_CHANGED_METHOD[kind], false);
  }

  /** `change`: a change is announced (not a session's list weighed again). */
  private tellStale(method: string, change: boolean): void {
    const kinds = KINDS_CHANGED_BY[method]!;
    (change ? this.lists.changed(kinds) : this.lists.stale(kinds))
      .then((stale) => stale.size > 0 && this.send({ jsonrpc: '2.0', method }, (session) => stale.has(session)))
      .catch((error: unknown) => this.log.warn('list_changed for toolset sessions not sent', { method, error: String(error) }));
  }
}
