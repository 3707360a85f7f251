// The tool search index: BM25 (coffer's own top-k scorer, bm25.ts) over each
// live tool's name, title, description, parameter names and descriptions, and
// its server's name. Built only from the lists the router holds (R2), never
// persisted; one server's tools are replaced as a whole when its list changes.
// Which tools a caller may see is decided at query time by the caller (the
// switches, a toolset), so one index serves every view and never returns a
// tool its caller cannot use.
import { Bm25, type FieldTerms } from './bm25.js';
import { synonymsOf, terms, thingsOf } from './vocabulary.js';

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
 * Four fields (the body stays one: its parts ranked no better apart).
 * head: the name and title, what the tool does in its author's own words;
 * body: the description, the parameters' names and descriptions, the server's name;
 * aka: synonyms of the name's and title's words;
 * things: the everyday things of the kinds the name and title name ("changelog" for a file).
 */
type Field = 'head' | 'body' | 'aka' | 'things';

/**
 * Chosen by a grid on the tuning sets only. Synonyms and things weigh more than
 * the body and a little less than the name: a user's word for what a tool does
 * says more than a word somewhere in its description. A long description is
 * discounted as usual (b): the long ones are mostly usage notes and examples,
 * whose words otherwise pull a tool into unrelated searches.
 */
const BOOST: Record<Field, number> = { head: 2.5, body: 1, aka: 2, things: 2 };
const PARAMS = { k1: 0.9, b: 0.75, delta: 0.25 };

/** The text of a tool's parameters: each property's name and description, one level deep. */
function paramText(schema: unknown): string {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  if (!properties || typeof properties !== 'object') return '';
  return Object.entries(properties as Record<string, unknown>)
    .map(([key, value]) => `${key} ${typeof (value as { description?: unknown })?.description === 'string' ? (value as { description: string }).description : ''}`)
    .join(' ');
}

/** A tool's terms per field. */
function fieldsOf(tool: SearchableTool): FieldTerms<Field> {
  const head = terms(`${tool.name} ${tool.title ?? ''}`);
  return {
    head,
    body: terms(`${tool.description ?? ''} ${paramText(tool.inputSchema)} ${tool.server}`),
    aka: synonymsOf(head),
    things: thingsOf(head),
  };
}

export class ToolIndex {
  private readonly scorer = new Bm25<Field>(BOOST, PARAMS);
  private readonly byServer = new Map<string, string[]>();

  /** Replaces every tool of `server` (its list changed, or it was added); an empty list removes it. */
  replaceServer(server: string, tools: readonly SearchableTool[]): void {
    this.scorer.remove(this.byServer.get(server) ?? []);
    this.byServer.delete(server);
    if (tools.length === 0) return;
    for (const tool of tools) this.scorer.add(tool.name, fieldsOf(tool));
    this.byServer.set(server, tools.map((tool) => tool.name));
  }

  get size(): number {
    return this.scorer.size;
  }

  /** The best `limit` tools for `query` among those `visible` admits, best first. */
  find(query: string, limit: number, visible: (name: string) => boolean = () => true): Hit[] {
    return this.scorer.top(terms(query), limit, visible).map((hit) => ({ name: hit.id, score: hit.score }));
  }
}
