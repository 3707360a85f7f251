// The tool search index: BM25 (MiniSearch) over each live tool's name, title,
// description, parameter names and descriptions, and its server's name. Built
// only from the lists the router holds (R2), never persisted; one server's
// tools are replaced as a whole when its list changes. Which tools a caller
// may see is decided at query time by the caller (the switches, a toolset),
// so one index serves every view and never returns a tool its caller cannot use.
import MiniSearch from 'minisearch';
import { synonymsOf, terms, words } from './vocabulary.js';

export interface SearchableTool {
  /** The name clients see (namespaced); unique across the index. */
  name: string;
  server: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
}

export interface Hit {
  name: string;
  score: number;
}

/**
 * Three fields, not one per source: a query costs one pass over each field's
 * postings of each term, so fewer fields is what keeps a search at 10,000
 * tools within budget (and measured no worse on the query sets).
 */
interface Doc {
  id: string;
  /** The name and title: what the tool does, in its author's own words. */
  head: string;
  /** The description, the parameters' names and descriptions, the server's name. */
  body: string;
  /** Synonyms of the name's and title's words (already stemmed). */
  aka: string;
}

const BOOST = { head: 3, body: 1, aka: 1 };

/** The text of a tool's parameters: each property's name and description, one level deep. */
function paramText(schema: unknown): string {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  if (!properties || typeof properties !== 'object') return '';
  return Object.entries(properties as Record<string, unknown>)
    .map(([key, value]) => `${key} ${typeof (value as { description?: unknown })?.description === 'string' ? (value as { description: string }).description : ''}`)
    .join(' ');
}

export class ToolIndex {
  private readonly search_ = new MiniSearch<Doc>({
    fields: ['head', 'body', 'aka'],
    tokenize: words,
    processTerm: (word) => terms(word)[0] ?? null,
    searchOptions: { boost: BOOST },
  });
  private readonly byServer = new Map<string, string[]>();

  /** Replaces every tool of `server` (its list changed, or it was added); an empty list removes it. */
  replaceServer(server: string, tools: readonly SearchableTool[]): void {
    for (const id of this.byServer.get(server) ?? []) this.search_.discard(id);
    this.byServer.delete(server);
    if (tools.length === 0) return;
    this.search_.addAll(
      tools.map((tool) => ({
        id: tool.name,
        head: `${tool.name} ${tool.title ?? ''}`,
        body: `${tool.description ?? ''} ${paramText(tool.inputSchema)} ${tool.server}`,
        aka: synonymsOf(terms(`${tool.name} ${tool.title ?? ''}`)).join(' '),
      })),
    );
    this.byServer.set(server, tools.map((tool) => tool.name));
  }

  get size(): number {
    return this.search_.documentCount;
  }

  /** The best `limit` tools for `query` among those `visible` admits, best first. */
  find(query: string, limit: number, visible: (name: string) => boolean = () => true): Hit[] {
    const results = this.search_.search(query, { filter: (result) => visible(result.id as string), combineWith: 'OR' });
    return results.slice(0, limit).map((result) => ({ name: result.id as string, score: result.score }));
  }
}
