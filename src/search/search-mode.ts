// Search mode: instead of every tool, a client sees coffer's meta-tools — one
// finds live tools by what they do, one calls a tool so found and, for a 2025-era
// session, one adds found tools to that session's own list — plus the tools the
// user pinned. Policy only: which mode a caller is in (its toolset's, else the
// gateway's), what its tools/list is, and how a meta-tool call is answered. The index follows the
// router's merged tools list (R2: live lists only, never stored) and answers
// each caller from what that caller may see, so a disabled tool or one outside
// its toolset is never found; a call through coffer__call_tool is forwarded
// like a direct call of the real tool: gated, logged under its own name.
import type { Logger } from '../log.js';
import { capabilityKey } from '../protocol/capabilities.js';
import type { ToolsetView } from '../toolsets/view.js';
import type { Namespaced } from '../router/namespace.js';
import type { Router } from '../router/router.js';
import { checkLength, MAX_NAME_CHARS } from '../mcp/param-limits.js';
import { RpcError } from '../mcp/rpc-error.js';
import { clipText, quotedText } from '../protocol/untrusted-text.js';
import { ADD_TOOLS, CALL_TOOL, DEFAULT_SEARCH_LIMIT, MAX_ADD_TOOLS, MAX_ANSWER_TEXT_CHARS, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, MAX_SESSION_TOOLS, META_TOOLS, SEARCH_TOOL, SESSION_META_TOOLS } from './meta-tools.js';
import { Pins } from './pins.js';
import { Slices } from './slices.js';
import { indexedAlike, ToolIndex, type SearchableTool } from './tool-index.js';

export type ToolsMode = 'full' | 'search';

type Item = Record<string, unknown>;

/** A 2025-era session as search mode knows it: the tools it added are its own. */
export interface SearchSession {
  /** Identifies the session (held weakly: its added tools go with it). */
  key: object;
  /** Tells this session alone that its tools/list changed. */
  listChanged(): void;
}

/** A tool as a session's additions hold it: its server and upstream name. */
const routeKey = (route: Namespaced): string => `${route.server}\u0000${route.original}`;

/** An upstream's title or description as a search answer shows it: cut past its bound, saying how much went. */
const clipped = (text: unknown): unknown => (typeof text === 'string' ? clipText(text, MAX_ANSWER_TEXT_CHARS) : text);

/** Parses the gateway-wide mode (COFFER_TOOLS_MODE); null when the text is neither. */
export function parseToolsMode(text: string | undefined): ToolsMode | null {
  if (text === undefined || text === '' || text === 'full') return 'full';
  return text === 'search' ? 'search' : null;
}

export class SearchMode {
  private readonly index = new ToolIndex();
  /** The merged list the index was last brought up to date with (the router replaces it on every merge). */
  private indexed: readonly Item[] | null = null;
  /** Per server, the tools indexed, so only changed servers are re-indexed. */
  private readonly indexedTools = new Map<string, readonly SearchableTool[]>();
  /** The index update running (or the last one, settled), or a search reading the index: the next waits for it. */
  private updating: Promise<void> = Promise.resolve();
  /**
   * Per session, the tools it added with coffer__add_tools, by server and
   * upstream name (routeKey) as pins are: an added tool stays added under a
   * new exposed name, and a tool that later takes its old name was not added.
   */
  private readonly added = new WeakMap<object, Set<string>>();
  /** Per toolset view (replaced on every toolset change), its compiled pins. */
  private readonly pins = new WeakMap<ToolsetView, Pins>();
  private readonly defaultPins: Pins;

  /** `defaultPins`: what /mcp in search mode lists beside the meta-tools (`SERVER/tool:<glob>`). */
  constructor(
    private readonly router: Pick<Router, 'list' | 'routesOf'>,
    private readonly defaultMode: ToolsMode,
    defaultPins: readonly string[],
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.defaultPins = new Pins(defaultPins);
  }

  /** A toolset's own mode, else the gateway's. */
  modeOf(view: ToolsetView | null): ToolsMode {
    return view?.spec.mode ?? this.defaultMode;
  }

  /** `session`: whether the caller has a session (the 2025 era), where coffer__add_tools exists. */
  isMetaTool(name: unknown, session: boolean): boolean {
    return name === SEARCH_TOOL || name === CALL_TOOL || (session && name === ADD_TOOLS);
  }

  /**
   * tools/list in search mode: the meta-tools, then those of `visible` (what
   * the caller sees after the switches and its toolset) that are pinned or
   * that this session added — never a tool `visible` does not hold.
   */
  list(view: ToolsetView | null, visible: readonly Item[], session?: SearchSession): Item[] {
    const meta = (session ? SESSION_META_TOOLS : META_TOOLS) as unknown as Item[];
    const pins = view ? this.pinsOf(view) : this.defaultPins;
    const added = session ? this.added.get(session.key) : undefined;
    if (pins.empty && !added) return meta;
    // The routes `visible` was made with: a merge since may give its names to other tools.
    const routes = this.router.routesOf(visible);
    const shown = visible.filter((tool) => {
      const route = routes?.get(capabilityKey('tools', tool));
      return route !== undefined && (added?.has(routeKey(route)) || pins.has(route.server, route.original));
    });
    return [...meta, ...shown];
  }

  /**
   * Answers a meta-tool call. `visible`: the tools this caller may see now
   * (after the switches and its toolset), asked once the index is up to date,
   * so a name found is answered with what it leads to then (a server renamed
   * meanwhile gives its names to another); `forward`: a direct tools/call of a real tool.
   */
  async call(
    params: Record<string, unknown>,
    visible: () => Promise<readonly Item[]>,
    forward: (params: Record<string, unknown>) => Promise<Record<string, unknown>>,
    session?: SearchSession,
  ): Promise<Record<string, unknown>> {
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    if (params.name === ADD_TOOLS && session) return this.add(args.names, await visible(), session);
    if (params.name === CALL_TOOL) {
      if (typeof args.name !== 'string' || args.name === '') throw RpcError.invalidParams(`${CALL_TOOL} needs "name": a tool name as ${SEARCH_TOOL} returned it`);
      checkLength('params.arguments.name', args.name, MAX_NAME_CHARS);
      if (this.isMetaTool(args.name, true)) throw RpcError.invalidParams(`${CALL_TOOL} calls the tools ${SEARCH_TOOL} finds, not coffer's own`);
      const inner = args.arguments ?? {};
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw RpcError.invalidParams(`${CALL_TOOL}: "arguments" must be an object`);
      return forward({ ...params, name: args.name, arguments: inner });
    }
    if (typeof args.query !== 'string' || args.query.trim() === '') throw RpcError.invalidParams(`${SEARCH_TOOL} needs "query": what you want to do, in words`);
    checkLength('params.arguments.query', args.query, MAX_QUERY_CHARS);
    const limit = args.limit ?? DEFAULT_SEARCH_LIMIT;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw RpcError.invalidParams(`${SEARCH_TOOL}: "limit" must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
    await this.refresh();
    const byName = new Map((await visible()).map((tool) => [tool.name as string, tool]));
    const query = args.query;
    // Meanwhile another search may have started re-indexing a server: read the index once it is whole.
    const hits = await this.whenIndexed(() => this.index.find(query, limit, (name) => byName.has(name)));
    const found = hits.map((hit) => {
      const { name, title, description, inputSchema } = byName.get(hit.name)!;
      return { name, ...(title === undefined ? {} : { title: clipped(title) }), ...(description === undefined ? {} : { description: clipped(description) }), inputSchema };
    });
    const text = found.length === 0 ? `No tool matches ${quotedText(args.query)}. Try other words for the task.` : JSON.stringify({ tools: found });
    return { content: [{ type: 'text', text }] };
  }

  /** Adds tools the caller sees to this session's list; list_changed follows when that list grew. */
  private add(names: unknown, visible: readonly Item[], session: SearchSession): Record<string, unknown> {
    if (!Array.isArray(names) || names.length === 0 || names.length > MAX_ADD_TOOLS || !names.every((name) => typeof name === 'string')) {
      throw RpcError.invalidParams(`${ADD_TOOLS} needs "names": 1 to ${MAX_ADD_TOOLS} tool names as ${SEARCH_TOOL} returned them`);
    }
    names.forEach((name, at) => checkLength(`params.arguments.names[${at}]`, name, MAX_NAME_CHARS));
    const seen = new Set(visible.map((tool) => tool.name as string));
    const unknown = names.filter((name) => !seen.has(name));
    if (unknown.length > 0) throw RpcError.invalidParams(`${ADD_TOOLS}: no tool you can use is named ${unknown.map((name) => quotedText(name)).join(', ')}; find names with ${SEARCH_TOOL}`);
    const routes = this.router.routesOf(visible);
    const added = this.added.get(session.key) ?? new Set<string>();
    // By routeKey, the name of each tool this call adds: all of them, or none when they would pass the cap.
    const fresh = new Map<string, string>();
    for (const name of names) {
      const route = routes?.get(name);
      if (route !== undefined && !added.has(routeKey(route))) fresh.set(routeKey(route), name);
    }
    if (added.size + fresh.size > MAX_SESSION_TOOLS) {
      throw RpcError.invalidParams(
        `${ADD_TOOLS}: this session has ${added.size} tools added and these names would add ${fresh.size} more; a session adds at most ${MAX_SESSION_TOOLS}. Call a found tool with ${CALL_TOOL} without adding it`,
      );
    }
    for (const key of fresh.keys()) added.add(key);
    this.added.set(session.key, added);
    if (fresh.size > 0) session.listChanged();
    const text = fresh.size === 0 ? 'Already in your tools/list: nothing changed.' : `Added to your tools/list: ${[...fresh.values()].join(', ')}. Call them directly from now on.`;
    return { content: [{ type: 'text', text }] };
  }

  private pinsOf(view: ToolsetView): Pins {
    let pins = this.pins.get(view);
    if (!pins) this.pins.set(view, (pins = new Pins(view.spec.pinned ?? [])));
    return pins;
  }

  /**
   * Brings the index up to the router's merged tools list, re-indexing only
   * the servers whose tools changed, in slices. One update runs at a time: a
   * search that comes meanwhile waits for it, then for its own.
   */
  private refresh(): Promise<void> {
    return this.whenIndexed(() => this.update());
  }

  /** Runs `step` once no update of the index is under way, and before any that comes after it: the index is whole while it runs. */
  private whenIndexed<T>(step: () => T | Promise<T>): Promise<T> {
    const run = this.updating.then(step);
    this.updating = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async update(): Promise<void> {
    const items = await this.router.list('tools');
    if (items === this.indexed) return;
    const slices = new Slices();
    const routes = this.router.routesOf(items);
    const byServer = new Map<string, SearchableTool[]>();
    for (const item of items) {
      const server = routes?.get(capabilityKey('tools', item))?.server;
      if (server === undefined) continue;
      const tool: SearchableTool = { name: item.name as string, server, inputSchema: item.inputSchema };
      if (typeof item.title === 'string') tool.title = item.title;
      if (typeof item.description === 'string') tool.description = item.description;
      const tools = byServer.get(server) ?? [];
      tools.push(tool);
      byServer.set(server, tools);
      await slices.pause();
    }
    for (const server of this.indexedTools.keys()) {
      if (byServer.has(server)) continue;
      this.index.removeServer(server);
      this.indexedTools.delete(server);
    }
    for (const [server, tools] of byServer) {
      if (await sameTools(this.indexedTools.get(server), tools, slices)) {
        // The new copies from now on: the old ones would otherwise be held beside the router's.
        this.indexedTools.set(server, tools);
        continue;
      }
      // Until this server is indexed whole, it counts as changed.
      this.indexedTools.delete(server);
      this.index.removeServer(server);
      for (const tool of tools) {
        this.index.add(tool);
        await slices.pause();
      }
      this.indexedTools.set(server, tools);
      this.tellCut(server, tools.length);
    }
    this.indexed = items;
  }

  /** Once per indexing of a server's list, whether its budget cut some of its tools: counts only, never their upstream-written text. */
  private tellCut(server: string, tools: number): void {
    const cut = this.index.cutTools(server);
    if (cut === 0) return;
    this.log.warn(
      "tool search indexes some of this server's tools in part: its tools' titles, descriptions and parameters pass the 1 MiB of text indexed per server, past which a tool is indexed by its name, its server and the first 256 characters of its title only. They stay listed and callable, and are found by their names",
      { server, tools, tools_indexed_in_part: cut },
    );
  }
}

/** Whether a server's tools give the index the words it holds for them. */
async function sameTools(indexed: readonly SearchableTool[] | undefined, tools: readonly SearchableTool[], slices: Slices): Promise<boolean> {
  if (indexed?.length !== tools.length) return false;
  for (let at = 0; at < tools.length; at++) {
    if (!indexedAlike(indexed[at]!, tools[at]!)) return false;
    await slices.pause();
  }
  return true;
}
