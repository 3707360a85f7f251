// Answers list(kind) for the router: from the session's cache (R2), or live
// from the upstream with pagination, normalised and encoded. Applies R7: a list
// that fails on a reused connection evicts it and is retried once on a fresh
// one. Keeps the cache in step with the upstream's list_changed and sessions.
import type { ActorEvent, ListOutcome } from '../../src/protocol/actor.js';
import { CAPABILITY_FLAG as CAPABILITY, IDENTITY_FIELD, KINDS_CHANGED_BY as CHANGED_KINDS, LIST_METHOD, LIST_RESULT_FIELD, type ListKind } from '../../src/protocol/capabilities.js';
import { JSONRPC, type ErrorBody, type ErrorCode } from '../../src/protocol/errors.js';
import { encodeList } from '../../src/protocol/list-codec.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { RequestFailure, type Connection } from './connection.js';
import { Coalescer } from './coalesce.js';
import type { CachedList, FetchedList, ListCache } from './list-cache.js';
import { charsOf, MAX_LIST_ITEMS } from './limits.js';
import { MAX_DEPTH, MAX_MESSAGE_CHARS } from '../../src/protocol/message-limit.js';
import type { ActorLog } from './log.js';
import { nestsDeeperThan } from '../../src/protocol/nesting.js';
import { sanitiseText } from '../../src/protocol/untrusted-text.js';
import { normaliseItems } from './normalise-schema.js';
import { toolHeaderParams } from './tool-header-params.js';
import type { Supervisor } from './supervisor.js';

/**
 * A flood of list_changed becomes at most one announcement per kind per window
 * (the first at once); the cache is dropped on every one. One per actor, so the
 * per_session connections of one upstream coalesce together.
 */
const LIST_CHANGED_WINDOW_MS = 250;

/** Guards against an upstream that never stops handing out cursors. */
const MAX_PAGES = 1_000;

/** The upstream's answer broke coffer's limits (see inbound.ts): a fresh connection would get the same. */
function refusedAnswer(failure: RequestFailure): boolean {
  const data = failure.rpc?.data as { code?: unknown } | undefined;
  return failure.rpc?.code === JSONRPC.UPSTREAM_RESPONSE_INVALID && data?.code === 'UPSTREAM_RESPONSE_INVALID';
}

export class Lister {
  /** Kinds cached in the session that ended, announced as changed once the next one starts. */
  private readonly changedBySessionEnd = new Set<ListKind>();
  private readonly announce = new Coalescer<ListKind>(LIST_CHANGED_WINDOW_MS, (_key, kind) => this.emit({ type: 'list_changed', server: this.config.name, kind }));

  constructor(
    private readonly config: ServerConfig,
    private readonly supervisor: Supervisor,
    private readonly cache: ListCache,
    private readonly log: ActorLog,
    private readonly emit: (event: ActorEvent) => void,
  ) {}

  async list(kind: ListKind, fresh: boolean): Promise<ListOutcome> {
    const cached = fresh ? undefined : this.cache.get(kind);
    if (cached) return this.answer(kind, cached, true);
    // Callers share the fetch, but each gets its own answer: every answer's buffer is transferred away.
    const fetched = await this.cache.shared(kind, () => this.fetch(kind));
    return 'error' in fetched ? { ok: false, kind, error: fetched.error } : this.answer(kind, fetched, false);
  }

  notified(method: string): void {
    const kinds = CHANGED_KINDS[method];
    if (!kinds) return;
    for (const kind of kinds) {
      this.cache.drop(kind);
      this.announce.push(kind, kind);
    }
  }

  sessionEnded(): void {
    for (const kind of this.cache.dropAll()) this.changedBySessionEnd.add(kind);
  }

  sessionStarted(): void {
    for (const kind of this.changedBySessionEnd) this.emit({ type: 'list_changed', server: this.config.name, kind });
    this.changedBySessionEnd.clear();
  }

  private async fetch(kind: ListKind): Promise<CachedList | { error: ErrorBody }> {
    const reused = this.supervisor.isReady;
    let connection = await this.supervisor.usable();
    if (!connection) return this.failure(kind, this.supervisor.unavailableCode(), this.supervisor.unavailableReason());
    let generation = this.cache.generation(kind);
    let fetched = await this.fetchFrom(connection, kind);
    if (fetched instanceof RequestFailure && fetched.kind !== 'timeout' && !refusedAnswer(fetched) && reused) {
      connection = await this.supervisor.replace(connection, `${LIST_METHOD[kind]} failed: ${fetched.message}`);
      if (!connection) return this.failure(kind, this.supervisor.unavailableCode(), this.supervisor.unavailableReason());
      generation = this.cache.generation(kind);
      fetched = await this.fetchFrom(connection, kind);
    }
    if (fetched instanceof RequestFailure) {
      const code = fetched.kind === 'timeout' ? 'UPSTREAM_TIMEOUT' : refusedAnswer(fetched) ? 'UPSTREAM_RESPONSE_INVALID' : fetched.kind === 'auth' ? 'UPSTREAM_AUTH_REQUIRED' : 'UPSTREAM_UNAVAILABLE';
      return this.failure(kind, code, `${LIST_METHOD[kind]} on ${this.config.name}: ${fetched.message}`);
    }
    return this.cache.store(kind, fetched, generation);
  }

  /** The list from one connection; -32601 and an unadvertised capability mean the upstream has none. */
  private async fetchFrom(connection: Connection, kind: ListKind): Promise<FetchedList | RequestFailure> {
    if (!connection.capabilities[CAPABILITY[kind]]) return { state: 'unsupported' };
    let pages: { items: unknown[]; ttlMs?: number };
    try {
      pages = await this.fetchAllPages(connection, kind);
    } catch (error) {
      if (!(error instanceof RequestFailure)) throw error;
      return error.rpc?.code === JSONRPC.METHOD_NOT_FOUND ? { state: 'unsupported' } : error;
    }
    let raw = this.withinDepth(kind, pages.items);
    // A modern upstream's tool with an invalid x-mcp-header could never be called with the headers it demands.
    if (kind === 'tools' && connection.era === 'modern') raw = toolHeaderParams.admit(raw, (text) => this.log.note(text));
    const { items, notes } = normaliseItems(kind, raw);
    for (const note of notes) this.log.note(note);
    return { state: 'live', list: await encodeList(items), ...(pages.ttlMs === undefined ? {} : { ttlMs: pages.ttlMs }) };
  }

  /** The items that keep to the nesting policy: one too deep is dropped (and noted), not the whole list. */
  private withinDepth(kind: ListKind, raw: unknown[]): unknown[] {
    const kept: unknown[] = [];
    raw.forEach((item, index) => {
      if (!nestsDeeperThan(item, MAX_DEPTH)) return void kept.push(item);
      const name = (item as Record<string, unknown>)[IDENTITY_FIELD[kind]];
      this.log.note(`${kind}: item ${index}${typeof name === 'string' ? ` (${name.slice(0, 200)})` : ''} nests deeper than ${MAX_DEPTH} levels and was dropped`);
    });
    return kept;
  }

  /** Follows nextCursor; request_ms bounds the whole list, not each page. `ttlMs`: the shortest a page gave. */
  private async fetchAllPages(connection: Connection, kind: ListKind): Promise<{ items: unknown[]; ttlMs?: number }> {
    const method = LIST_METHOD[kind];
    const field = LIST_RESULT_FIELD[kind];
    const limitMs = this.config.timeouts.request_ms;
    const deadline = Date.now() + limitMs;
    const items: unknown[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    let ttlMs: number | undefined;
    let chars = 0;
    do {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new RequestFailure('timeout', `${method} got no full answer within ${limitMs} ms`);
      const result = await connection.request(method, cursor === undefined ? undefined : { cursor }, { timeoutMs: remainingMs });
      const page = result[field];
      if (!Array.isArray(page)) throw new RequestFailure('upstream', `${method} result has no ${field} array`);
      if (items.length + page.length > MAX_LIST_ITEMS) throw new RequestFailure('upstream', `${method} lists more than ${MAX_LIST_ITEMS} items in all, more than coffer keeps switches for: the list is refused`);
      chars += charsOf(page, MAX_MESSAGE_CHARS - chars);
      if (chars > MAX_MESSAGE_CHARS) throw new RequestFailure('upstream', `${method} pages hold more than ${MAX_MESSAGE_CHARS / (1024 * 1024)} MB of text in all, more than one message may: the list is refused`);
      for (const item of page) items.push(item);
      if (typeof result.ttlMs === 'number' && Number.isFinite(result.ttlMs)) ttlMs = Math.min(ttlMs ?? Infinity, Math.max(0, result.ttlMs));
      cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
      if (cursor !== undefined) {
        if (cursors.has(cursor) || cursors.size >= MAX_PAGES) throw new RequestFailure('upstream', `${method} pagination does not end`);
        cursors.add(cursor);
      }
    } while (cursor !== undefined);
    return ttlMs === undefined ? { items } : { items, ttlMs };
  }

  /** Each answer gets its own copy of the encoded list: the caller transfers (detaches) it. */
  private answer(kind: ListKind, entry: CachedList, cached: boolean): ListOutcome {
    const { version, fetchedAt } = entry;
    const expiresAt = this.cache.expiresAt(entry);
    if (entry.state === 'unsupported') return { ok: true, state: 'unsupported', kind, version, fetchedAt, expiresAt, cached };
    return { ok: true, state: 'live', kind, list: { ...entry.list, bytes: entry.list.bytes.slice() }, version, fetchedAt, expiresAt, cached };
  }

  /** `message` may quote the upstream: it is cut and its controls escaped, as a status's last_error is (it reaches /readyz, REST and the UI). */
  private failure(kind: ListKind, code: ErrorCode, message: string): { error: ErrorBody } {
    const said = sanitiseText(message);
    this.log.note(`${kind}: ${said}`, 'warn');
    return { error: { code, message: said, details: { server: this.config.name } } };
  }
}
