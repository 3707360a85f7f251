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

/**
 * How much of a tool's own words are indexed: its name and title, and apart
 * its description and its parameters' names and descriptions, each this many
 * characters at most. An upstream may list tens of megabytes of them; all of
 * it would hold the router's thread for seconds and grow the index by
 * gigabytes, while a tool is found by what its first sentences say.
 */
export const INDEXED_CHARS = 8_192;

/**
 * How much of those words one server's tools have indexed in all, titles
 * included (25 times what the wordiest real server writes): past it a tool is
 * indexed by its name, its server and the start of its title only. A list of
 * thousands of long descriptions or titles would otherwise cost the router's
 * thread tens of seconds and the index a gigabyte.
 */
export const SERVER_INDEXED_CHARS = 1_048_576;

/** How much of its title a tool past its server's budget is still indexed by: a title names a tool in a few words. */
export const TITLE_FLOOR_CHARS = 256;

/** The text of a tool's parameters: each property's name and description, one level deep, up to INDEXED_CHARS. */
function paramText(schema: unknown): string {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  if (!properties || typeof properties !== 'object') return '';
  let text = '';
  for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
    if (text.length >= INDEXED_CHARS) break;
    const description = (value as { description?: unknown } | null)?.description;
    text += ` ${key.slice(0, INDEXED_CHARS)} ${typeof description === 'string' ? description.slice(0, INDEXED_CHARS) : ''}`;
  }
  return text.slice(0, INDEXED_CHARS);
}

const clip = (text: string | undefined): string | undefined => text?.slice(0, INDEXED_CHARS);

/**
 * Whether two versions of a tool give the index the same words. Only what is
 * indexed is compared, so the router's thread never serialises a whole input
 * schema (an upstream's may be megabytes) to learn that a list is unchanged.
 */
export function indexedAlike(was: SearchableTool, is: SearchableTool): boolean {
  if (was.name !== is.name || was.server !== is.server || clip(was.title) !== clip(is.title) || clip(was.description) !== clip(is.description)) return false;
  // The router passes an unchanged upstream list's schemas on as they are; only a new copy needs reading.
  return was.inputSchema === is.inputSchema || paramText(was.inputSchema) === paramText(is.inputSchema);
}

/**
 * A tool's terms per field; `room`: how much of its title's, description's and parameters' text its server's budget has left.
 * `cut`: whether that budget left out some of its text (its own bound, INDEXED_CHARS, does not count).
 */
function fieldsOf(tool: SearchableTool, room: number): { fields: FieldTerms<Field>; chars: number; cut: boolean } {
  const fullTitle = clip(tool.title) ?? '';
  const title = fullTitle.slice(0, Math.max(room, TITLE_FLOOR_CHARS));
  const head = terms(`${tool.name} ${title}`.slice(0, INDEXED_CHARS));
  const left = Math.max(0, room - title.length);
  const own = `${(tool.description ?? '').slice(0, INDEXED_CHARS)} ${paramText(tool.inputSchema)}`;
  const words = own.slice(0, left);
  return {
    fields: { head, body: terms(`${words} ${tool.server}`), aka: synonymsOf(head), things: thingsOf(head) },
    chars: title.length + words.length,
    cut: title.length < fullTitle.length || own.trimEnd().length > left,
  };
}

export class ToolIndex {
  private readonly scorer = new Bm25<Field>(BOOST, PARAMS);
  /** Per server, its tools' names, how much of their words are indexed and how many tools its budget cut. */
  private readonly byServer = new Map<string, { names: string[]; chars: number; cut: number }>();
  /**
   * Per name, the server whose tool the index holds under it. A name passes
   * from one server to another (a prefix given up and taken) and the server
   * that takes it may be indexed first: the one that gave it up then removes
   * only what is still its own.
   */
  private readonly serverOf = new Map<string, string>();

  /** Replaces every tool of `server` (its list changed, or it was added); an empty list removes it. */
  replaceServer(server: string, tools: readonly SearchableTool[]): void {
    this.removeServer(server);
    for (const tool of tools) this.add(tool);
  }

  /** Removes every tool of `server`. */
  removeServer(server: string): void {
    const own = (this.byServer.get(server)?.names ?? []).filter((name) => this.serverOf.get(name) === server);
    this.scorer.remove(own);
    for (const name of own) this.serverOf.delete(name);
    this.byServer.delete(server);
  }

  /** Adds one tool to those of its server, so a long list can be indexed a few tools at a time. */
  add(tool: SearchableTool): void {
    const server = this.byServer.get(tool.server) ?? { names: [], chars: 0, cut: 0 };
    const { fields, chars, cut } = fieldsOf(tool, SERVER_INDEXED_CHARS - server.chars);
    this.scorer.add(tool.name, fields);
    this.serverOf.set(tool.name, tool.server);
    server.names.push(tool.name);
    server.chars += chars;
    if (cut) server.cut++;
    this.byServer.set(tool.server, server);
  }

  /** How many of `server`'s tools are indexed in part: those past SERVER_INDEXED_CHARS of its tools' text. */
  cutTools(server: string): number {
    return this.byServer.get(server)?.cut ?? 0;
  }

  get size(): number {
    return this.scorer.size;
  }

  /** The best `limit` tools for `query` among those `visible` admits, best first. */
  find(query: string, limit: number, visible: (name: string) => boolean = () => true): Hit[] {
    return this.scorer.top(terms(query), limit, visible).map((hit) => ({ name: hit.id, score: hit.score }));
  }
}
