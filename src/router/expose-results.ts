// The URIs inside call results, in the form coffer exposes them: the
// namespacing of lists applied to what a call gives back, so a client can read
// a resource_link a tool just returned through coffer, with the URI it got.
// Pure. Only the arrays the protocol puts URIs in are walked (content,
// messages[].content, contents); structuredContent and _meta are the
// upstream's own data and pass unchanged. A result with nothing to rewrite is
// returned as it is: no copy on the common path.
import type { CallKind } from '../protocol/capabilities.js';
import { namespaceUri } from './namespace.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

const withUri = (object: Json, namespace: string): Json => ({ ...object, uri: namespaceUri(namespace, object.uri as string) });

/** A content block: a resource_link's uri, an embedded resource's resource.uri; any other block unchanged. */
function exposeBlock(block: unknown, namespace: string): unknown {
  if (!isObject(block)) return block;
  if (block.type === 'resource_link' && typeof block.uri === 'string') return withUri(block, namespace);
  if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.uri === 'string') return { ...block, resource: withUri(block.resource, namespace) };
  return block;
}

/** A prompt message holds one content block. */
function exposeMessage(message: unknown, namespace: string): unknown {
  if (!isObject(message)) return message;
  const content = exposeBlock(message.content, namespace);
  return content === message.content ? message : { ...message, content };
}

/** One item of resources/read's contents. */
function exposeContents(item: unknown, namespace: string): unknown {
  return isObject(item) && typeof item.uri === 'string' ? withUri(item, namespace) : item;
}

/** Where each kind of result keeps its URIs. */
const WALKS: Record<CallKind, { field: string; each: (item: unknown, namespace: string) => unknown }> = {
  tools: { field: 'content', each: exposeBlock },
  prompts: { field: 'messages', each: exposeMessage },
  resources: { field: 'contents', each: exposeContents },
};

/** The result of tools/call, prompts/get or resources/read from the server with `namespace`, its URIs exposed; "" changes nothing. */
export function exposeResultUris(kind: CallKind, result: Json, namespace: string): Json {
  if (namespace === '') return result;
  const { field, each } = WALKS[kind];
  const items = result[field];
  if (!Array.isArray(items)) return result;
  let exposed: unknown[] | null = null;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const after = each(item, namespace);
    if (after !== item) (exposed ??= items.slice())[index] = after;
  }
  return exposed ? { ...result, [field]: exposed } : result;
}
