// Mcp-Param-* on a modern tools/call: a tool whose inputSchema annotates an
// argument `"x-mcp-header": "<Name>"` makes a 2026-07-28 client mirror that
// argument in an `Mcp-Param-<Name>` header, so intermediaries can route on it
// without reading the body; the server must refuse a call whose header is
// missing or disagrees with the argument (400, -32020, as for the standard
// headers). An argument that is null or absent needs no header, and a header
// without an argument is ignored. Pure, but for a memo per merged list.
import { toolHeaders, type HeaderParam } from '../../protocol/mcp-param-headers.js';
import { headerMismatch, type EraRejection } from '../era.js';
import { decodeHeaderValue, isPlainObject, stripOws } from './wire.js';

interface ListDeclarations {
  tools: Map<string, unknown>;
  declared: Map<string, readonly HeaderParam[]>;
}

/**
 * Per merged tools list (a merge is a new array; an unchanged list is the same
 * one): its tools by name, and the declarations of the listed ones called so
 * far. A tool's schema is walked on its first call, not every schema on every
 * merge.
 */
const listDeclarations = new WeakMap<readonly unknown[], ListDeclarations>();

function declarationsOf(tools: readonly unknown[]): ListDeclarations {
  let found = listDeclarations.get(tools);
  if (!found) {
    const byName = new Map<string, unknown>();
    for (const tool of tools) if (isPlainObject(tool) && typeof tool.name === 'string') byName.set(tool.name, tool.inputSchema);
    found = { tools: byName, declared: new Map() };
    listDeclarations.set(tools, found);
  }
  return found;
}

/** The header arguments `tool` declares in `tools` (none when its declaration is invalid: clients exclude such a tool). */
export function declaredHeaders(tools: readonly unknown[], tool: string): readonly HeaderParam[] {
  const { tools: schemas, declared } = declarationsOf(tools);
  let params = declared.get(tool);
  if (params === undefined) {
    // Checked before the name's length is, with names any caller picks: only the list's own are remembered.
    if (!schemas.has(tool)) return [];
    const headers = toolHeaders(schemas.get(tool));
    params = headers.ok ? headers.params : [];
    declared.set(tool, params);
  }
  return params;
}

/** A JSON number as the header may write it (the spec compares numbers by value: 42.0 is 42). */
const DECIMAL = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function agrees(decoded: string, value: string | number | boolean): boolean {
  if (typeof value === 'number') return DECIMAL.test(decoded) && Number(decoded) === value;
  return decoded === String(value);
}

/** The refusal of a call whose Mcp-Param-* headers (lower-cased names) do not mirror its declared arguments, else undefined. */
export function checkParamHeaders(declared: readonly HeaderParam[], args: unknown, headers: Readonly<Record<string, string | undefined>>): EraRejection | undefined {
  for (const { argument, header } of declared) {
    const value = isPlainObject(args) ? args[argument] : undefined;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    const name = `Mcp-Param-${header}`;
    const body = `arguments.${argument}=${JSON.stringify(value)}`;
    const raw = headers[`mcp-param-${header.toLowerCase()}`];
    if (raw === undefined) return headerMismatch('param-header-missing', name, `the body carries ${body} but the ${name} header is absent`);
    const decoded = decodeHeaderValue(stripOws(raw));
    if (decoded === undefined) return headerMismatch('param-header-invalid-encoding', name, `the ${name} header carries an invalid Base64 sentinel value`);
    if (!agrees(decoded, value)) return headerMismatch('param-header-mismatch', name, `the ${name} header says ${JSON.stringify(decoded)} but the body carries ${body}`);
  }
  return undefined;
}
