// Makes an upstream's list items acceptable to strict SDK clients downstream:
// one malformed tool must not make a client reject the whole merged tools/list.
// Valid items are returned as the same objects; only broken ones are rebuilt.
import { IDENTITY_FIELD as KEY_FIELD, type ListKind } from '../../src/protocol/capabilities.js';
import { isObject } from '../../src/protocol/json-object.js';

export type Item = Record<string, unknown>;

export interface NormaliseResult {
  items: Item[];
  /** What was changed or dropped and why, for the actor's log file. */
  notes: string[];
}

/** What a strict client takes as a property's schema: an object of any shape. */
function isSchemaObject(value: unknown): value is Item {
  return typeof value === 'object' && value !== null;
}

function validProperties(value: unknown): boolean {
  return isObject(value) && Object.values(value).every(isSchemaObject);
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

/** A boolean subschema as the object schema that means the same (2020-12 allows both; strict clients take only objects). */
function asObjectSchema(property: unknown): Item | undefined {
  if (typeof property === 'boolean') return property ? {} : { not: {} };
  return isSchemaObject(property) ? property : undefined;
}

/**
 * The schema with only what strict clients refuse fixed: `type` becomes
 * "object", a boolean property schema its object equivalent, a property that
 * is no schema at all and a non-string `required` entry are dropped. Every
 * other keyword ($defs, allOf, if/then/else, $anchor, ...) stays: what coffer
 * does not understand is not coffer's to remove.
 */
function repairObjectSchema(schema: Item): Item {
  const { properties, required, ...rest } = schema;
  const repaired: Item = { ...rest, type: 'object' };
  if (isObject(properties)) {
    const fixed = Object.entries(properties).flatMap(([name, property]) => {
      const object = asObjectSchema(property);
      return object === undefined ? [] : [[name, object] as const];
    });
    repaired.properties = Object.fromEntries(fixed);
  }
  if (Array.isArray(required)) {
    const names = required.filter((name): name is string => typeof name === 'string');
    if (names.length > 0) repaired.required = names;
  }
  return repaired;
}

/** `{type: "object"}` for what is no schema object at all, else the schema repaired where it stands (repairObjectSchema). */
export function repairInputSchema(schema: unknown): Item {
  return isObject(schema) ? repairObjectSchema(schema) : { type: 'object' };
}

function normaliseTool(tool: Item, notes: string[]): Item {
  let fixed = tool;
  if (!isObjectSchema(tool.inputSchema)) {
    notes.push(`tool ${String(tool.name)}: inputSchema is not an object schema, repaired`);
    fixed = { ...fixed, inputSchema: repairInputSchema(tool.inputSchema) };
  }
  const output = tool.outputSchema;
  if (output === undefined || isObjectSchema(output)) return fixed;
  // Structured content is always an object: a schema of anything else describes no result the tool can give.
  if (isObject(output) && output.type === 'object') {
    notes.push(`tool ${String(tool.name)}: outputSchema has invalid properties or required, repaired`);
    return { ...fixed, outputSchema: repairObjectSchema(output) };
  }
  notes.push(`tool ${String(tool.name)}: outputSchema is not an object schema, dropped`);
  const { outputSchema: _dropped, ...rest } = fixed;
  return rest;
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
