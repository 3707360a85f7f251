// Makes an upstream's list items acceptable to strict SDK clients downstream:
// one malformed tool must not make a client reject the whole merged tools/list.
// Valid items are returned as the same objects; only broken ones are rebuilt.
import { IDENTITY_FIELD as KEY_FIELD, type ListKind } from '../../src/protocol/capabilities.js';

export type Item = Record<string, unknown>;

export interface NormaliseResult {
  items: Item[];
  /** What was changed or dropped and why, for the actor's log file. */
  notes: string[];
}

function isObject(value: unknown): value is Item {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validProperties(value: unknown): boolean {
  return isObject(value) && Object.values(value).every((property) => typeof property === 'object' && property !== null);
}

function validRequired(value: unknown): boolean {
  return Array.isArray(value) && value.every((name) => typeof name === 'string');
}

/** What the SDK's ToolSchema accepts for inputSchema / outputSchema. */
export function isObjectSchema(schema: unknown): schema is Item {
  return (
    isObject(schema) &&
    schema.type === 'object' &&
    (schema.properties === undefined || validProperties(schema.properties)) &&
    (schema.required === undefined || validRequired(schema.required))
  );
}

/** `{type: "object"}` plus whatever valid `properties` / `required` the broken schema still has. */
export function repairInputSchema(schema: unknown): Item {
  const repaired: Item = { type: 'object' };
  if (!isObject(schema)) return repaired;
  if (validProperties(schema.properties)) repaired.properties = schema.properties;
  if (Array.isArray(schema.required)) {
    const required = schema.required.filter((name): name is string => typeof name === 'string');
    if (required.length > 0) repaired.required = required;
  }
  return repaired;
}

function normaliseTool(tool: Item, notes: string[]): Item {
  let fixed = tool;
  if (!isObjectSchema(tool.inputSchema)) {
    notes.push(`tool ${String(tool.name)}: inputSchema is not an object schema, repaired`);
    fixed = { ...fixed, inputSchema: repairInputSchema(tool.inputSchema) };
  }
  if (tool.outputSchema !== undefined && !isObjectSchema(tool.outputSchema)) {
    notes.push(`tool ${String(tool.name)}: outputSchema is not an object schema, dropped`);
    const { outputSchema: _dropped, ...rest } = fixed;
    fixed = rest;
  }
  return fixed;
}

function normalisePrompt(prompt: Item, notes: string[]): Item {
  if (prompt.arguments === undefined) return prompt;
  const args = Array.isArray(prompt.arguments) ? prompt.arguments : [];
  const valid = args.filter((arg) => isObject(arg) && typeof arg.name === 'string');
  if (Array.isArray(prompt.arguments) && valid.length === args.length) return prompt;
  notes.push(`prompt ${String(prompt.name)}: dropped ${args.length - valid.length} invalid argument(s)`);
  return { ...prompt, arguments: valid };
}

/** Resources and templates need a `name` since protocol 2025-06-18; older servers omit it. */
function withName(item: Item, key: string): Item {
  return typeof item.name === 'string' ? item : { ...item, name: key };
}

function withoutBadDescription(item: Item, key: string, notes: string[]): Item {
  if (item.description === undefined || typeof item.description === 'string') return item;
  notes.push(`${key}: description is not a string, dropped`);
  const { description: _dropped, ...rest } = item;
  return rest;
}

export function normaliseItems(kind: ListKind, raw: readonly unknown[]): NormaliseResult {
  const keyField = KEY_FIELD[kind];
  const seen = new Set<string>();
  const items: Item[] = [];
  const notes: string[] = [];
  raw.forEach((entry, index) => {
    const key = isObject(entry) ? entry[keyField] : undefined;
    if (!isObject(entry) || typeof key !== 'string') {
      notes.push(`${kind}[${index}]: no string ${keyField}, dropped`);
      return;
    }
    if (seen.has(key)) {
      notes.push(`${kind}: duplicate ${keyField} ${key}, later one dropped`);
      return;
    }
    seen.add(key);
    let item = withoutBadDescription(entry, key, notes);
    if (kind === 'tools') item = normaliseTool(item, notes);
    else if (kind === 'prompts') item = normalisePrompt(item, notes);
    else item = withName(item, key);
    items.push(item);
  });
  return { items, notes };
}
