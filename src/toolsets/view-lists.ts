// The lists a session sees: the whole merged list, or its toolset's part of it.
// What each toolset session last listed (a modern listen: its view when it
// opened) is remembered as a fingerprint, so a list change is announced only
// to the sessions and listens whose own view changed.
import { createHash } from 'node:crypto';
import type { ListKind } from '../protocol/capabilities.js';
import type { Item } from '../router/merge.js';
import type { Router } from '../router/router.js';
import type { ToolsetView } from './view.js';

/** A session or modern listen as far as its view goes (compared by identity). */
export interface ViewSession {
  toolset: string | null;
}

interface Narrowed {
  items: Item[];
  fingerprint: string;
}

/**
 * What of a set besides its items makes a list: a tools list in search mode is
 * the meta-tools and the pins, so a new mode or new pins are a new list even
 * when the set's tools are the same.
 */
const shapeOf = (kind: ListKind, view: ToolsetView): string => (kind === 'tools' ? `${JSON.stringify([view.spec.mode ?? null, view.spec.pinned ?? []])}\n` : '');

export class ViewLists {
  /** Per merged list (replaced by the router on every re-merge) and view (replaced on every toolset change): computed once. */
  private narrowed = new WeakMap<readonly Item[], Map<ToolsetView, Narrowed>>();
  /** Per list narrowed to a view, that view: what else of a view goes with a list (search mode's pins) is read from the one it was narrowed with. */
  private narrowedBy = new WeakMap<readonly Item[], ToolsetView>();
  /** Toolset sessions that listed, with the fingerprint of what they got per kind. */
  private listed = new Map<ViewSession, Map<ListKind, string>>();
  /** Sessions and listens that ended: a list of theirs still being gathered then must not bring them back into `listed` for good. */
  private readonly ended = new WeakSet<ViewSession>();
  /** Per kind, how many changes were announced: a list gathered across one may hold what was there before it. */
  private readonly changes = new Map<ListKind, number>();

  constructor(
    private readonly router: Pick<Router, 'list' | 'routesOf' | 'partOf'>,
    private readonly views: (toolset: string | null) => ToolsetView | null,
    /** A toolset session's list of `kind` was gathered across a change: it is weighed again (stale) now that it is remembered. */
    private readonly listedAcrossChange: (kind: ListKind) => void = () => undefined,
  ) {}

  /** The toolset a session sees; null: the whole surface. */
  viewOf(toolset: string | null): ToolsetView | null {
    return this.views(toolset);
  }

  /** The view a list this gave out was narrowed with; null: the whole list. A toolset changed while the list was gathered has its new view here. */
  viewOfList(items: readonly Item[]): ToolsetView | null {
    return this.narrowedBy.get(items) ?? null;
  }

  /** The merged list as `toolset` sees it, recorded for no one: a caller with no session to notify later (the 2026-07-28 era), or what a search looks through. */
  async listFor(kind: ListKind, toolset: string | null): Promise<Item[]> {
    const items = await this.router.list(kind);
    const view = this.viewOf(toolset);
    return view ? this.narrow(kind, items, view).items : items;
  }

  async list(kind: ListKind, session: ViewSession): Promise<Item[]> {
    const changes = this.changes.get(kind);
    const items = await this.router.list(kind);
    const view = this.viewOf(session.toolset);
    if (!view) return items;
    const narrowed = this.narrow(kind, items, view);
    if (this.ended.has(session)) return narrowed.items;
    let kinds = this.listed.get(session);
    if (!kinds) this.listed.set(session, (kinds = new Map()));
    kinds.set(kind, narrowed.fingerprint);
    // A change announced meanwhile passed over this session (it had not listed yet, or was measured before this list).
    if (this.changes.get(kind) !== changes) this.listedAcrossChange(kind);
    return narrowed.items;
  }

  /** A change of `kinds` is announced: the toolset sessions it made stale (see stale). */
  changed(kinds: readonly ListKind[]): Promise<Set<ViewSession>> {
    for (const kind of kinds) this.changes.set(kind, (this.changes.get(kind) ?? 0) + 1);
    return this.stale(kinds);
  }

  /** The toolset sessions whose list of one of `kinds` is no longer what they last got; each is then taken as told. */
  async stale(kinds: readonly ListKind[]): Promise<Set<ViewSession>> {
    const stale = new Set<ViewSession>();
    for (const kind of kinds) {
      if (![...this.listed.values()].some((listed) => listed.has(kind))) continue;
      const items = await this.router.list(kind);
      for (const [session, listed] of this.listed) {
        const before = listed.get(kind);
        const view = this.viewOf(session.toolset);
        if (before === undefined || !view) continue;
        const now = this.narrow(kind, items, view).fingerprint;
        if (now === before) continue;
        listed.set(kind, now);
        stale.add(session);
      }
    }
    return stale;
  }

  forget(session: ViewSession): void {
    this.ended.add(session);
    this.listed.delete(session);
  }

  private narrow(kind: ListKind, items: Item[], view: ToolsetView): Narrowed {
    let byView = this.narrowed.get(items);
    if (!byView) this.narrowed.set(items, (byView = new Map()));
    let narrowed = byView.get(view);
    if (!narrowed) {
      const kept = view.narrow(kind, items, this.router.routesOf(items));
      // Whoever is given the narrowed list (search mode's pins) reads it by the routes it was narrowed with.
      this.router.partOf(items, kept);
      this.narrowedBy.set(kept, view);
      narrowed = { items: kept, fingerprint: createHash('sha256').update(shapeOf(kind, view)).update(JSON.stringify(kept)).digest('base64url') };
      byView.set(view, narrowed);
    }
    return narrowed;
  }
}
