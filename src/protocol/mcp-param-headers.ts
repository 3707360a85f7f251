// Tool arguments a 2026-07-28-era upstream wants mirrored into Mcp-Param-*
// headers: a top-level property of the tool's inputSchema annotated
// `"x-mcp-header": "<Name>"`. The spec says a client excludes a tool whose
// annotation is invalid (empty, not an HTTP token, repeated, on a property that
// is no string/integer/boolean, or anywhere but a top-level property): such a
// call could never carry the header the server demands.
import { isObject } from './json-object.js';

export interface HeaderParam {
  argument: string;
  header: string;
}

export type ToolHeaders = { ok: true; params: HeaderParam[] } | { ok: false; reason: string };

const ANNOTATION = 'x-mcp-header';
/** RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PRIMITIVE_TYPES = new Set(['string', 'integer', 'boolean']);

/** How many annotations a schema holds anywhere (nested ones included). */
function annotationsIn(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((sum: number, item) => sum + annotationsIn(item), 0);
  if (!isObject(node)) return 0;
  return Object.entries(node).reduce((sum, [key, value]) => sum + (key === ANNOTATION ? 1 : 0) + annotationsIn(value), 0);
}

/** The header arguments of one tool's inputSchema, or why the tool must be left out. */
export function toolHeaders(inputSchema: unknown): ToolHeaders {
  const properties = isObject(inputSchema) && isObject(inputSchema.properties) ? inputSchema.properties : {};
  const params: HeaderParam[] = [];
  const seen = new Set<string>();
  for (const [argument, schema] of Object.entries(properties)) {
    if (!isObject(schema) || !(ANNOTATION in schema)) continue;
    const header = schema[ANNOTATION];
    if (typeof header !== 'string' || !TOKEN.test(header)) return { ok: false, reason: `argument ${argument}: ${ANNOTATION} ${JSON.stringify(header)} is not an HTTP header name` };
    if (seen.has(header.toLowerCase())) return { ok: false, reason: `argument ${argument}: ${ANNOTATION} ${header} repeats another argument's header` };
    if (typeof schema.type !== 'string' || !PRIMITIVE_TYPES.has(schema.type)) {
      return { ok: false, reason: `argument ${argument}: ${ANNOTATION} on a ${JSON.stringify(schema.type ?? 'untyped')} property (only string, integer, boolean)` };
    }
    seen.add(header.toLowerCase());
    params.push({ argument, header });
  }
  if (annotationsIn(inputSchema) !== params.length) return { ok: false, reason: `${ANNOTATION} is allowed only on top-level properties` };
  return { ok: true, params };
}

/** The header arguments of one server's tools, by tool name, as its tools/list declared them. */
export class ToolHeaderParams {
  private readonly byTool = new Map<string, readonly HeaderParam[]>();

  /** The tools to keep; records their header arguments and notes each one left out. */
  admit(tools: readonly unknown[], note: (text: string) => void): unknown[] {
    return tools.filter((tool) => {
      if (!isObject(tool) || typeof tool.name !== 'string') return true;
      const headers = toolHeaders(tool.inputSchema);
      if (!headers.ok) {
        note(`tools: ${tool.name.slice(0, 200)} left out: ${headers.reason}`);
        this.byTool.delete(tool.name);
        return false;
      }
      if (headers.params.length > 0) this.byTool.set(tool.name, headers.params);
      else this.byTool.delete(tool.name);
      return true;
    });
  }

  of(tool: string): readonly HeaderParam[] {
    return this.byTool.get(tool) ?? [];
  }
}
