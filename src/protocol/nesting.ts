// How deeply JSON nests: on the raw text (before JSON.parse, whose cost grows
// with depth; without recursion) and on a parsed value (recursion bounded by
// the limit). Both stop as soon as the answer is known, and neither can
// overflow the stack. Pure.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
/** The characters that matter to nesting; everything else is skipped by the regex engine. */
const STRUCTURE = /["[\]{}]/g;

/** The index of the quote that closes the string opening at `start`, or -1 when the text ends first. */
function stringEnd(text: string, start: number): number {
  for (let quote = text.indexOf('"', start + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
  }
  return -1;
}

/**
 * The deepest nesting of objects and arrays in JSON text (a scalar is 0,
 * `{}` is 1), or the first depth past `stopAbove` once the text gets there.
 * Brackets inside strings do not count. Malformed text gets a number too;
 * JSON.parse rejects it afterwards.
 */
export function textDepth(text: string, stopAbove: number): number {
  let depth = 0;
  let deepest = 0;
  STRUCTURE.lastIndex = 0;
  for (let match = STRUCTURE.exec(text); match !== null; match = STRUCTURE.exec(text)) {
    const char = text.charCodeAt(match.index);
    if (char === QUOTE) {
      const end = stringEnd(text, match.index);
      if (end === -1) break;
      STRUCTURE.lastIndex = end + 1;
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      depth += 1;
      if (depth > deepest && (deepest = depth) > stopAbove) break;
    } else {
      depth -= 1;
    }
  }
  return deepest;
}

/** What a message too deep to parse still tells at its top level: its id, and whether it has a method. */
export interface TopLevel {
  id: string | number | undefined;
  hasMethod: boolean;
}

/** Reads the scalar value that starts at or after `from`: a string or a number, else undefined. */
function scalarAt(text: string, from: number): string | number | undefined {
  const rest = /^\s*("|-?\d)/.exec(text.slice(from, from + 64));
  if (!rest) return undefined;
  const start = from + rest.index + rest[0].length - 1;
  if (rest[1] === '"') {
    const end = stringEnd(text, start);
    return end === -1 ? undefined : (JSON.parse(text.slice(start, end + 1)) as string);
  }
  const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(start, start + 64));
  return number ? Number(number[0]) : undefined;
}

/** The top-level `id` and `method` keys of a JSON object text, found without parsing its nested values. */
export function topLevel(text: string): TopLevel {
  const found: TopLevel = { id: undefined, hasMethod: false };
  let depth = 0;
  STRUCTURE.lastIndex = 0;
  for (let match = STRUCTURE.exec(text); match !== null; match = STRUCTURE.exec(text)) {
    const char = text.charCodeAt(match.index);
    if (char !== QUOTE) {
      depth += char === OPEN_BRACE || char === OPEN_BRACKET ? 1 : -1;
      continue;
    }
    const end = stringEnd(text, match.index);
    if (end === -1) break;
    STRUCTURE.lastIndex = end + 1;
    if (depth !== 1 || !/^\s*:/.test(text.slice(end + 1, end + 17))) continue;
    const key = text.slice(match.index + 1, end);
    if (key === 'method') found.hasMethod = true;
    else if (key === 'id') found.id = scalarAt(text, text.indexOf(':', end) + 1);
  }
  return found;
}

/** Whether `value` nests objects and arrays deeper than `max` levels (a scalar is 0, `{}` is 1). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  return typeof value === 'object' && value !== null && deeperThan(value, max);
}

/**
 * Recursive, but the recursion stops `levelsLeft` levels down whatever the
 * value's depth, so the stack holds at most max + 1 frames (callers pass
 * MAX_DEPTH); no arrays are allocated on the way, which keeps a cold actor fast.
 */
function deeperThan(node: object, levelsLeft: number): boolean {
  if (levelsLeft === 0) return true;
  if (Array.isArray(node)) {
    for (const child of node) if (typeof child === 'object' && child !== null && deeperThan(child, levelsLeft - 1)) return true;
    return false;
  }
  for (const key in node) {
    const child = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && deeperThan(child, levelsLeft - 1)) return true;
  }
  return false;
}
