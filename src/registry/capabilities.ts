// The management view of one server's capabilities (R6, R8) and the switches
// (R10). Live items come from the actor; flags and timestamps from the
// preferences; known keys the upstream no longer offers are shown as not live.
import { capabilityKey, IDENTITY_FIELD, KINDS, isPrimary, kindsOfType, LIST_KINDS, type CapabilitiesView, type CapabilityItem, type CapabilityType, type KindView, type ListKind } from '../protocol/capabilities.js';
import type { AuditActor, OwnWords, PreferenceChange, PreferenceRow } from '../protocol/db.js';
import { CofferError, type ErrorBody, type Result } from '../protocol/errors.js';
import type { DbWriterCalls } from '../db/writer-handle.js';
import type { PreferenceGate } from '../router/preference-gate.js';
import type { UpstreamLists } from '../router/upstream-lists.js';
import type { UpstreamDirectory } from '../upstreams/upstream.js';

function knownKeys(rows: PreferenceRow[]): Array<Omit<PreferenceRow, 'server' | 'first_seen_at'>> {
  return rows.map(({ capability_type, capability_key, enabled, last_seen_at, own_name, own_description }) => ({ capability_type, capability_key, enabled, last_seen_at, own_name, own_description }));
}

/** The user's words beside the upstream's own fields (null: none of the user's). */
function ownWordsOf(row: PreferenceRow | undefined): { own_name: string | null; own_description: string | null } {
  return { own_name: row?.own_name ?? null, own_description: row?.own_description ?? null };
}

/** Pure: one kind's view from its live answer (or failure) and the server's preference rows. */
export function kindView(
  kind: ListKind,
  answer: { state: 'live'; items: Record<string, unknown>[] } | { state: 'unsupported' } | { state: 'failed'; error: ErrorBody },
  rows: PreferenceRow[],
  claimedElsewhere: Set<string>,
  autoEnable: boolean,
): KindView {
  const type = KINDS[kind].preferenceType;
  const byKey = new Map(rows.filter((row) => row.capability_type === type).map((row) => [row.capability_key, row]));
  const items: CapabilityItem[] = [];
  const liveKeys = new Set<string>();
  if (answer.state === 'live') {
    for (const item of answer.items) {
      const key = capabilityKey(kind, item);
      liveKeys.add(key);
      const row = byKey.get(key);
      items.push({ ...item, key, live: true, enabled: row?.enabled ?? autoEnable, first_seen_at: row?.first_seen_at ?? null, last_seen_at: row?.last_seen_at ?? null, ...ownWordsOf(row) });
    }
  }
  // Known but not offered now (R6): shown once, under the primary kind (resources rather than templates).
  if (isPrimary(kind)) {
    for (const row of byKey.values()) {
      if (liveKeys.has(row.capability_key) || claimedElsewhere.has(row.capability_key)) continue;
      items.push({ key: row.capability_key, live: false, enabled: row.enabled, first_seen_at: row.first_seen_at, last_seen_at: row.last_seen_at, ...ownWordsOf(row) });
    }
  }
  if (answer.state === 'failed') return { state: 'failed', items, error: answer.error };
  return { state: answer.state, items };
}

export class CapabilityService {
  constructor(
    private readonly writer: DbWriterCalls,
    private readonly upstreams: UpstreamDirectory,
    private readonly gate: PreferenceGate,
    /** Where live lists come from: it reconciles them and keeps the router's copies in step with a refresh. */
    private readonly lists: Pick<UpstreamLists, 'fetch'>,
    private readonly events: {
      listChanged(kind: ListKind): void;
      preferenceChanged(server: string, change: PreferenceChange): void;
      /** The name a tool or prompt is exposed under (its namespace, fitted to the name budget). */
      exposedName?(server: string, key: string): string;
      /** Why a name cannot be the user's own for a tool or prompt of the server; null when it can. */
      ownNameProblem?(server: string, name: string): string | null;
      wordsChanged?(server: string, row: PreferenceRow): void;
    },
  ) {}

  /**
   * Lists every kind live (R2; `fresh` drops the cache first, R3), reconciles
   * (R4), and answers per kind. Unreachable upstream: 503/504 whose details
   * carry every known key with its flag (R6).
   */
  async view(server: string, fresh: boolean): Promise<CapabilitiesView> {
    const record = await this.writer.getServer(server);
    if (!record) throw new CofferError('RESOURCE_NOT_FOUND', `no server named '${server}': see 'coffer mcp list'`);
    const upstream = this.upstreams.get(server);
    if (!upstream) {
      throw new CofferError('UPSTREAM_UNAVAILABLE', `server '${server}' is disabled: enable it with 'coffer mcp enable ${server}'`, { known: knownKeys(await this.writer.getPreferences(server)) });
    }
    const fetched = await Promise.all(LIST_KINDS.map((kind) => this.lists.fetch(upstream, kind, fresh)));
    // The rows below must cover every live key.
    await Promise.all(fetched.map(({ reconciled }) => reconciled));
    const answers = fetched.map(({ answer }) => answer);
    const rows = await this.writer.getPreferences(server);
    const failures = answers.filter((answer) => !answer.ok).map((answer) => (answer as { error: ErrorBody }).error);
    // Nothing live and something failed: the upstream gave us nothing (R6, R7); "unsupported" kinds do not count.
    if (failures.length > 0 && !answers.some((answer) => answer.ok && answer.state === 'live')) {
      const timeout = failures.find((error) => error.code === 'UPSTREAM_TIMEOUT');
      const first = timeout ?? failures[0]!;
      throw new CofferError(first.code, `${first.message} — the known capabilities are listed in details.known; test the connection with 'coffer mcp test ${server}'`, { known: knownKeys(rows) });
    }
    const templateKeys = new Set<string>();
    const templates = answers[LIST_KINDS.indexOf('resourceTemplates')]!;
    if (templates.ok && templates.state === 'live') for (const item of templates.items) templateKeys.add(capabilityKey('resourceTemplates', item));
    const view = { server } as CapabilitiesView;
    for (const [index, kind] of LIST_KINDS.entries()) {
      const answer = answers[index]!;
      const state = answer.ok ? (answer.state === 'live' ? { state: 'live' as const, items: answer.items } : { state: 'unsupported' as const }) : { state: 'failed' as const, error: answer.error };
      const shown = kindView(kind, state, rows, kind === 'resources' ? templateKeys : new Set(), record.config.auto_enable_new_capabilities);
      const exposedName = this.events.exposedName;
      if (exposedName && IDENTITY_FIELD[kind] === 'name') shown.items = shown.items.map((item) => ({ ...item, exposed_name: exposedName(server, (item.own_name as string | null) ?? item.key) }));
      view[KINDS[kind].viewField] = shown;
    }
    return view;
  }

  /** All-or-nothing; the snapshot and every session see the change at once. */
  async set(server: string, changes: PreferenceChange[], actor: AuditActor): Promise<PreferenceRow[]> {
    const rows = await this.written(server, () => this.writer.setPreferences(server, changes, actor));
    this.gate.load(rows);
    // Templates are announced with resources (one notification covers both).
    const kinds = new Set(changes.flatMap((change) => kindsOfType(change.capability_type)));
    for (const kind of kinds) if (isPrimary(kind)) this.events.listChanged(kind);
    for (const change of changes) this.events.preferenceChanged(server, change);
    return rows;
  }

  /**
   * The user's own name and description for a tool or prompt (`words` already
   * parsed); like a switch, the snapshot and every session see it at once.
   */
  async setOwnWords(server: string, type: CapabilityType, key: string, words: OwnWords, actor: AuditActor): Promise<PreferenceRow> {
    if (type === 'resource') throw new CofferError('CONFIG_INVALID', 'only tools and prompts have words of their own: a resource is named by its URI', { errors: [{ field: 'type', message: 'must be tool or prompt' }] });
    const problem = typeof words.name === 'string' ? (this.events.ownNameProblem?.(server, words.name) ?? null) : null;
    if (problem !== null) throw new CofferError('CONFIG_INVALID', `name: ${problem}`, { errors: [{ field: 'name', message: problem }] });
    const [row] = await this.written(server, async () => {
      const result = await this.writer.setOwnWords(server, type, key, words, actor);
      return result.ok ? { ok: true as const, value: [result.value] } : result;
    });
    this.gate.load([row!]);
    for (const kind of kindsOfType(type)) this.events.listChanged(kind);
    this.events.wordsChanged?.(server, row!);
    return row!;
  }

  /** A writer change of known keys; a key of a kind no one has listed yet is listed live (which reconciles) and the change tried once more. */
  private async written(server: string, write: () => Promise<Result<PreferenceRow[]>>): Promise<PreferenceRow[]> {
    let result = await write();
    if (!result.ok && result.error.code === 'RESOURCE_NOT_FOUND' && this.upstreams.get(server)) {
      await this.view(server, false).catch(() => undefined);
      result = await write();
    }
    if (!result.ok) throw new CofferError(result.error.code, result.error.message, result.error.details);
    return result.value;
  }
}
