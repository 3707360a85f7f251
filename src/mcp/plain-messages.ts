// A cheap shape check for the messages of a POST. The SDK transport runs its
// zod JSONRPCMessageSchema over every message, a sizeable share of coffer's
// main-thread time per call. This check accepts
// only what that schema surely accepts, unchanged (plain requests and
// notifications); anything else returns null and goes to the SDK transport,
// whose verdict and error answers stay the reference.
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { RELATED_TASK_META_KEY, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

export interface PlainMessages {
  messages: JSONRPCMessage[];
  /** Ids of the requests among them, in order. */
  requestIds: RequestId[];
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** zod's int() (the SDK's id and progressToken schemas) takes safe integers only: 1e300 is an integer, but not one of those. */
function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

function onlyKeys(message: Record<string, unknown>, allowed: Set<string>): boolean {
  for (const key of Object.keys(message)) if (!allowed.has(key)) return false;
  return true;
}

/** The schema strips unknown keys of the related-task entry, so a message with one is left to it. */
function plainParams(params: unknown): boolean {
  if (params === undefined) return true;
  if (!isObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isObject(meta) || RELATED_TASK_META_KEY in meta) return false;
  return meta.progressToken === undefined || isId(meta.progressToken);
}

/**
 * The messages if every one is a plain request or notification (not
 * `initialize`: the SDK transport owns session start) in a batch the SDK
 * takes, else null.
 */
export function plainMessages(parsed: unknown): PlainMessages | null {
  const list = Array.isArray(parsed) ? parsed : [parsed];
  if (list.length > MAX_BATCH_SIZE) return null;
  const requestIds: RequestId[] = [];
  for (const message of list) {
    if (!isObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string' || message.method === 'initialize') return null;
    if (!plainParams(message.params)) return null;
    if ('id' in message) {
      if (!isId(message.id) || !onlyKeys(message, REQUEST_KEYS)) return null;
      requestIds.push(message.id);
    } else if (!onlyKeys(message, NOTIFICATION_KEYS)) return null;
  }
  return { messages: list as JSONRPCMessage[], requestIds };
}
