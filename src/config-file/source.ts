// Reading the text of a config file (YAML, or JSON with comments) into a value
// plus a way back from a path in that value to the line and column it was
// written at, so every refusal can point into the file. Pure.
import { parseTree, printParseErrorCode, type Node as JsonNode, type ParseError as JsonParseError } from 'jsonc-parser';
import type { ConfigFileIssue } from '../protocol/events.js';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node as YamlNode } from 'yaml';

export interface Position {
  line: number;
  column: number;
}

/** One problem of a file: where (lines and columns from 1, as editors count), which field, what. */
export type FileIssue = ConfigFileIssue;

export type FileFormat = 'yaml' | 'json';

export interface SourceDocument {
  value: unknown;
  /** Where the node at `path` starts: its key when `key` is set, else its value; the nearest existing parent when it is missing. */
  locate(path: readonly PropertyKey[], key?: boolean): Position;
}

export class FileSyntaxError extends Error {
  override name = 'FileSyntaxError';
  constructor(readonly issue: FileIssue) {
    super(`${issue.message} at line ${issue.line}, column ${issue.column}`);
  }
}

/** `.json` and `.jsonc` files are JSON (comments and trailing commas allowed); anything else is YAML (a superset of JSON). */
export function formatOf(path: string): FileFormat {
  return /\.jsonc?$/i.test(path) ? 'json' : 'yaml';
}

/** Where `offset` is in `text`, lines and columns from 1. */
function positionAt(text: string, offset: number): Position {
  const before = text.slice(0, offset).split(/\r\n|\r|\n/);
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

const fileIssue = (position: Position, message: string): FileIssue => ({ ...position, field: '(file)', message });

export function parseSource(text: string, format: FileFormat): SourceDocument {
  return format === 'json' ? parseJson(text) : parseYaml(text);
}

function parseYaml(text: string): SourceDocument {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const first = document.errors[0];
  if (first !== undefined) {
    // The library's message quotes the offending line, which may hold a secret: only its first sentence is kept.
    const message = first.message.split(/ at line \d+/)[0]!;
    const { line, col } = lines.linePos(first.pos[0]);
    throw new FileSyntaxError(fileIssue({ line, column: col }, `not valid YAML: ${message.charAt(0).toLowerCase()}${message.slice(1)}`));
  }
  const at = (node: YamlNode | null | undefined): Position | null => {
    const offset = node?.range?.[0];
    if (offset === undefined) return null;
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  return {
    value: yamlValue(document, at),
    locate(path, key = false) {
      let node = document.contents as YamlNode | null;
      let found = at(node) ?? { line: 1, column: 1 };
      for (const [index, segment] of path.entries()) {
        if (isMap(node)) {
          const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
          if (!pair) break;
          const last = index === path.length - 1;
          found = (last && key ? at(pair.key as YamlNode) : at(pair.value as YamlNode)) ?? found;
          node = pair.value as YamlNode | null;
        } else if (isSeq(node) && typeof segment === 'number' && node.items[segment] !== undefined) {
          node = node.items[segment] as YamlNode;
          found = at(node) ?? found;
        } else break;
      }
      return found;
    },
  };
}

/** How many times aliases may copy what they name, in all: more is a "billion laughs" file. */
const MAX_YAML_ALIAS_COUNT = 100;

/** The document as a value; aliases that expand past the bound are refused at the first alias (toJS throws a ReferenceError: no document error). */
function yamlValue(document: Document.Parsed, at: (node: YamlNode) => Position | null): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    let position: Position = { line: 1, column: 1 };
    visit(document, {
      Alias(_key, alias) {
        position = at(alias) ?? position;
        return visit.BREAK;
      },
    });
    throw new FileSyntaxError(fileIssue(position, `not valid YAML: its aliases expand to more than ${MAX_YAML_ALIAS_COUNT} copies, as a resource-exhaustion file does; write the values out`));
  }
}

/** The value a parsed node holds; objects are built with own properties only (a "__proto__" key is a key, as with JSON.parse). */
function jsonValueOf(node: JsonNode): unknown {
  if (node.type === 'array') return (node.children ?? []).map(jsonValueOf);
  if (node.type !== 'object') return node.value;
  return Object.fromEntries((node.children ?? []).map((property) => [property.children![0]!.value as string, jsonValueOf(property.children![1]!)]));
}

/** A key written twice: JSON parsers keep the last one silently, which in a file kept in git hides an edit. */
function duplicateKey(node: JsonNode): JsonNode | null {
  if (node.type === 'object') {
    const seen = new Set<unknown>();
    for (const property of node.children ?? []) {
      const keyNode = property.children![0]!;
      if (seen.has(keyNode.value)) return keyNode;
      seen.add(keyNode.value);
    }
  }
  for (const child of node.children ?? []) {
    const found = duplicateKey(child);
    if (found) return found;
  }
  return null;
}

/** Deeper than any config file is written; reading the tree recurses once per level. */
const MAX_JSON_DEPTH = 64;

/** The first node nested past MAX_JSON_DEPTH, if any (walked without recursion). */
function tooDeep(root: JsonNode): JsonNode | null {
  const pending: Array<[JsonNode, number]> = [[root, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (depth > MAX_JSON_DEPTH) return node;
    for (const child of node.children ?? []) pending.push([child, node.type === 'property' ? depth : depth + 1]);
  }
  return null;
}

/** A JSON parse error in words: "close brace expected". */
function jsonProblem(error: JsonParseError): string {
  return printParseErrorCode(error.error).replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase();
}

function parseJson(text: string): SourceDocument {
  const errors: JsonParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first !== undefined) {
    throw new FileSyntaxError(fileIssue(positionAt(text, first.offset), `not valid JSON: ${jsonProblem(first)}`));
  }
  if (root === undefined) return { value: undefined, locate: () => ({ line: 1, column: 1 }) };
  const deep = tooDeep(root);
  if (deep) throw new FileSyntaxError(fileIssue(positionAt(text, deep.offset), `nested deeper than ${MAX_JSON_DEPTH} levels, more than any config file needs`));
  const repeated = duplicateKey(root);
  if (repeated) throw new FileSyntaxError(fileIssue(positionAt(text, repeated.offset), `not valid JSON: the key "${String(repeated.value)}" is written twice in one object`));
  return {
    value: jsonValueOf(root),
    locate(path, key = false) {
      let node: JsonNode | undefined = root;
      let found = positionAt(text, root.offset);
      for (const [index, segment] of path.entries()) {
        let next: JsonNode | undefined;
        if (node?.type === 'object') {
          const property: JsonNode | undefined = node.children?.find((child) => child.children![0]!.value === segment);
          if (property && index === path.length - 1 && key) return positionAt(text, property.children![0]!.offset);
          next = property?.children![1];
        } else if (node?.type === 'array' && typeof segment === 'number') next = node.children?.[segment];
        if (next === undefined) break;
        node = next;
        found = positionAt(text, node.offset);
      }
      return found;
    },
  };
}
