// Search mode: instead of every tool, a client sees coffer's two meta-tools —
// one finds live tools by what they do, the other calls one so found. Policy
// only: which mode a caller is in (its toolset's, else the gateway's), what its
// tools/list is, and how a meta-tool call is answered. The index follows the
// router's merged tools list (R2: live lists only, never stored) and answers
// each caller from what that caller may see, so a disabled tool or one outside
// its toolset is never found; a call through coffer__call_tool is forwarded
// like a direct call of the real tool: gated, logged under its own name.
import { capabilityKey } from '../protocol/capabilities.js';
import type { ToolsetView } from '../toolsets/view.js';
import type { Router } from '../router/router.js';
import { RpcError } from '../mcp/rpc-error.js';
import { CALL_TOOL, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, META_TOOLS, SEARCH_TOOL } from './meta-tools.js';
import { ToolIndex, type SearchableTool } from './tool-index.js';

export type ToolsMode = 'full' | 'search';

type Item = Record<string, unknown>;

/** Parses the gateway-wide mode (COFFER_TOOLS_MODE); null when the text is neither. */
export function parseToolsMode(text: string | undefined): ToolsMode | null {
  if (text === undefined || text === '' || text === 'full') return 'full';
  return text === 'search' ? 'search' : null;
}

export class SearchMode {
  private readonly index = new ToolIndex();
  /** The merged list the index was last brought up to date with (the router replaces it on every merge). */
  private indexed: readonly Item[] | null = null;
  /** Per server, what its indexed tools were (names and descriptions), so only changed servers are re-indexed. */
  private readonly signatures = new Map<string, string>();

  constructor(
    private readonly router: Pick<Router, 'list' | 'directory'>,
    private readonly defaultMode: ToolsMode,
  ) {}

  /** A toolset's own mode, else the gateway's. */
  modeOf(view: ToolsetView | null): ToolsMode {
    return view?.spec.mode ?? this.defaultMode;
  }

  isMetaTool(name: unknown): boolean {
    return name === SEARCH_TOOL || name === CALL_TOOL;
  }

  /** tools/list in search mode: the meta-tools only. */
  list(): { tools: Item[] } {
    return { tools: META_TOOLS as unknown as Item[] };
  }

  /**
   * Answers a meta-tool call. `visible`: the tools this caller may see (after
   * the switches and its toolset); `forward`: a direct tools/call of a real tool.
   */
  async call(params: Record<string, unknown>, visible: readonly Item[], forward: (params: Record<string, unknown>) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    if (params.name === CALL_TOOL) {
      if (typeof args.name !== 'string' || args.name === '') throw RpcError.invalidParams(`${CALL_TOOL} needs "name": a tool name as ${SEARCH_TOOL} returned it`);
      if (this.isMetaTool(args.name)) throw RpcError.invalidParams(`${CALL_TOOL} calls the tools ${SEARCH_TOOL} finds, not coffer's own`);
      const inner = args.arguments ?? {};
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw RpcError.invalidParams(`${CALL_TOOL}: "arguments" must be an object`);
      return forward({ ...params, name: args.name, arguments: inner });
    }
    if (typeof args.query !== 'string' || args.query.trim() === '') throw RpcError.invalidParams(`${SEARCH_TOOL} needs "query": what you want to do, in words`);
    const limit = args.limit === undefined ? DEFAULT_SEARCH_LIMIT : Number(args.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw RpcError.invalidParams(`${SEARCH_TOOL}: "limit" must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
    await this.refresh();
    const byName = new Map(visible.map((tool) => [tool.name as string, tool]));
    const found = this.index.find(args.query, limit, (name) => byName.has(name)).map((hit) => {
      const { name, title, description, inputSchema } = byName.get(hit.name)!;
      return { name, ...(title === undefined ? {} : { title }), ...(description === undefined ? {} : { description }), inputSchema };
    });
    const text = found.length === 0 ? `No tool matches "${args.query}". Try other words for the task.` : JSON.stringify({ tools: found });
    return { content: [{ type: 'text', text }] };
  }

  /** Brings the index up to the router's merged tools list, re-indexing only the servers whose tools changed. */
  private async refresh(): Promise<void> {
    const items = await this.router.list('tools');
    if (items === this.indexed) return;
    const routes = this.router.directory.routes('tools');
    const byServer = new Map<string, SearchableTool[]>();
    for (const item of items) {
      const server = routes?.get(capabilityKey('tools', item))?.server;
      if (server === undefined) continue;
      const tool: SearchableTool = { name: item.name as string, server, inputSchema: item.inputSchema };
      if (typeof item.title === 'string') tool.title = item.title;
      if (typeof item.description === 'string') tool.description = item.description;
      byServer.set(server, [...(byServer.get(server) ?? []), tool]);
    }
    for (const server of this.signatures.keys()) {
      if (byServer.has(server)) continue;
      this.index.replaceServer(server, []);
      this.signatures.delete(server);
    }
    for (const [server, tools] of byServer) {
      const signature = tools.map((tool) => `${tool.name}\u0000${tool.title ?? ''}\u0000${tool.description ?? ''}\u0000${JSON.stringify(tool.inputSchema ?? null)}`).join('\u0001');
      if (this.signatures.get(server) === signature) continue;
      this.index.replaceServer(server, tools);
      this.signatures.set(server, signature);
    }
    this.indexed = items;
  }
}
