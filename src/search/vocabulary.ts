// How tool text and a user's words become search terms: identifiers split at
// case changes, digits and punctuation (`browser_take_screenshot`,
// `createPullRequest`), words stemmed (Porter), stop words dropped, and a
// tool's name widened with the words users say for it ("remove" finds
// `delete_file`, "ticket" finds `create_issue`), and phrases read for what
// they mean ("keep in mind" is remember), and the things of the kinds a tool
// names ("the changelog" finds `read_file`); the words themselves are in
// word-tables.ts. Pure.
import { stemmer } from 'stemmer';
import { ARTICLES, BETWEEN, GROUPS, PHRASES, STOP, THINGS } from './word-tables.js';

/** Splits identifiers and prose into lower-case words: `takeScreenshot_v2` → take, screenshot, v, 2; an acronym's plural is the acronym (`PRs`, `listURLs` → pr; list, url). */
export function words(text: string): string[] {
  return text
    .replace(/(?<![A-Z])([A-Z]{2,})s(?![a-z])/g, '$1')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .replace(/([a-zA-Z])([0-9])|([0-9])([a-zA-Z])/g, '$1$3 $2$4')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/**
 * Stems already computed: re-indexing a server stems the same few thousand
 * words again, and stemming is most of its cost. Emptied when full, so words
 * from queries cannot grow it without bound.
 */
const stemCache = new Map<string, string>();
const STEMS_HELD = 50_000;

/** A word's stem (Porter), cached. */
function stemOf(lower: string): string {
  let stem = stemCache.get(lower);
  if (stem === undefined) {
    if (stemCache.size >= STEMS_HELD) stemCache.clear();
    stem = stemmer(lower);
    stemCache.set(lower, stem);
  }
  return stem;
}

/** A number standing alone, not part of a word (`v2`, `mp3`, `foo_2` keep theirs). */
const NUMBER = /(?<![\p{L}\p{N}_])\p{N}+(?![\p{L}\p{N}_])/gu;

/** A phrase's first stem → the stems after it and the terms it means, longest first ("bring up to date" before "bring up"). */
const phrases = new Map<string, Array<{ rest: string[]; means: string[] }>>();
for (const line of PHRASES) {
  const [meaning = '', list = ''] = line.split(':');
  const means = words(meaning).map(stemOf);
  for (const phrase of list.split(',')) {
    const [first = '', ...rest] = words(phrase).filter((word) => !ARTICLES.has(word)).map(stemOf);
    phrases.set(first, [...(phrases.get(first) ?? []), { rest, means }]);
  }
}
for (const entries of phrases.values()) entries.sort((a, b) => b.rest.length - a.rest.length);

/** Whether `rest` stands in `stems` from `at` on. */
function standsAt(rest: readonly string[], stems: readonly string[], at: number): boolean {
  return rest.every((stem, k) => stems[at + k] === stem);
}

/** The terms meant by the phrases in these words (their stems beside them); a word belongs to one phrase at most. */
function phraseTerms(lower: readonly string[], stems: readonly string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < stems.length; i++) {
    for (const { rest, means } of phrases.get(stems[i]!) ?? []) {
      const at = standsAt(rest, stems, i + 1) ? i + 1 : BETWEEN.has(lower[i + 1] ?? '') && standsAt(rest, stems, i + 2) ? i + 2 : -1;
      if (at < 0) continue;
      found.push(...means);
      i = at + rest.length - 1;
      break;
    }
  }
  return found;
}

/**
 * The search terms of a text: its words' and what its phrases mean. A number
 * standing alone is a value (issue 42, 5 replicas, error 400), never what a tool does.
 */
export function terms(text: string): string[] {
  const lower = words(text.replace(NUMBER, ' ')).filter((word) => !ARTICLES.has(word));
  const stems = lower.map(stemOf);
  return [...stems.filter((_, i) => !STOP.has(lower[i]!)), ...phraseTerms(lower, stems)];
}

/**
 * A word of a group or a thing → its terms, each word alone (never read as a
 * phrase with its neighbours in a list); worked out once per word, so
 * indexing a tool (on the router's thread) only looks them up. Bounded by the
 * vocabulary.
 */
const termsOfWord = new Map<string, string[]>();
function wordTerms(word: string): string[] {
  let found = termsOfWord.get(word);
  if (found === undefined) termsOfWord.set(word, (found = words(word).filter((part) => !STOP.has(part)).map(stemOf)));
  return found;
}

/** Adds `values` to the set `map` holds under `key`. */
function addAll(map: Map<string, Set<string>>, key: string, values: readonly string[]): void {
  const set = map.get(key) ?? new Set<string>();
  for (const value of values) set.add(value);
  map.set(key, set);
}

/** A stem → the words of every group it is in. */
const synonyms = new Map<string, Set<string>>();
for (const group of GROUPS) {
  const members = group.split(' ');
  for (const member of members) addAll(synonyms, stemOf(member), members);
}

/** A kind word's stem → the things of that kind. */
const thingsOfKind = new Map<string, Set<string>>();
for (const line of THINGS) {
  const [kinds = '', list = ''] = line.split(':');
  const things = list.split(',').map((thing) => thing.trim());
  for (const kind of words(kinds).map(stemOf)) addAll(thingsOfKind, kind, things);
}

/**
 * The terms of the words `table` holds under these terms: each word once
 * (two words of one stem count twice, as two ways of saying it), none whose
 * stem is already among them.
 */
function lookUp(table: ReadonlyMap<string, ReadonlySet<string>>, own: readonly string[]): string[] {
  const mine = new Set(own);
  const found = new Set<string>();
  for (const term of own) for (const word of table.get(term) ?? []) if (!mine.has(stemOf(word))) found.add(word);
  return [...found].flatMap(wordTerms);
}

/** The terms that mean what these terms mean: indexed beside a tool's name, so a query needs no expansion. */
export function synonymsOf(own: readonly string[]): string[] {
  return lookUp(synonyms, own);
}

/** The terms of the things of the kinds these terms name: indexed beside a tool's name, as its synonyms are. */
export function thingsOf(own: readonly string[]): string[] {
  return lookUp(thingsOfKind, own);
}
