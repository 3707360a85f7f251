// The requestState coffer hands a modern caller with an input_required
// result: a sealed handle the caller echoes on its retry. HMAC-SHA256 over
// the payload with a key made when the daemon starts: what it points at (a
// parked upstream call, or an upstream's own state) lives no longer than the
// daemon, so a key on disk would only let stale states be read as valid.
// Bound to the caller's credential, the method and the name or URI called,
// and an expiry; anything else (a tampered byte, another caller, another
// tool) is refused before the payload is read.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { JSONRPC } from '../../protocol/errors.js';
import { RpcError } from '../rpc-error.js';

const VERSION = 'c1';

/** What a requestState stands for. */
export type StateHandle =
  /** A legacy upstream's call kept in flight by coffer, at this round. */
  | { kind: 'park'; park: string; round: number }
  /** A modern upstream's own input_required for `key` (the original name or URI): its state (null: none) is given back to it on the retry of that key; `call` names the call answered with it, so the state is good for one retry. */
  | { kind: 'wrap'; server: string; key: string; upstream: string | null; call: string }
  /** A task an upstream created for a tools/call of this tool (the tasks extension): its own taskId. */
  | { kind: 'task'; server: string; tool: string; task: string };

/** Who may use a state, for what. */
export interface StateBinding {
  /** A digest of the caller's credential (callerKey). */
  caller: string;
  method: string;
  /** The name (tools/call, prompts/get) or URI (resources/read) as the caller sent it. */
  target: string;
}

interface Payload {
  h: StateHandle;
  c: string;
  m: string;
  n: string;
  exp: number;
}

/** Digests of the credentials seen lately: every modern request asks, and a client sends the same one each time. */
const callerKeys = new Map<string, string>();
const CALLER_KEYS_KEPT = 256;

/** The caller as far as coffer can tell: its credential on /mcp (none: every credential-less caller is one). */
export function callerKey(authorization: string | undefined): string {
  const credential = authorization ?? '';
  let key = callerKeys.get(credential);
  if (key === undefined) {
    if (callerKeys.size >= CALLER_KEYS_KEPT) callerKeys.clear();
    key = digest(`caller\u0000${credential}`);
    callerKeys.set(credential, key);
  }
  return key;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

function invalid(message: string, reason: 'REQUEST_STATE_INVALID' | 'REQUEST_STATE_EXPIRED'): RpcError {
  return RpcError.coffer(JSONRPC.INVALID_PARAMS, reason, message);
}

export class RequestStateSeal {
  constructor(
    private readonly key: Buffer = randomBytes(32),
    private readonly now: () => number = Date.now,
  ) {}

  seal(handle: StateHandle, binding: StateBinding, ttlMs: number): string {
    const payload: Payload = { h: handle, c: binding.caller, m: binding.method, n: digest(binding.target), exp: this.now() + ttlMs };
    const body = `${VERSION}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${body}.${this.mac(body)}`;
  }

  /** The handle of a state this caller may use for this request; an RpcError (-32602) naming why not otherwise. */
  open(state: unknown, binding: StateBinding): StateHandle {
    if (typeof state !== 'string') throw invalid('requestState must be the string coffer gave in its input_required result', 'REQUEST_STATE_INVALID');
    const [version, encoded, mac, ...rest] = state.split('.');
    const body = `${version}.${encoded}`;
    if (version !== VERSION || encoded === undefined || mac === undefined || rest.length > 0 || !this.verify(body, mac)) {
      throw invalid('requestState failed coffer\'s integrity check (changed, or not coffer\'s): call again without requestState and inputResponses', 'REQUEST_STATE_INVALID');
    }
    const payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Payload;
    if (payload.c !== binding.caller || payload.m !== binding.method || payload.n !== digest(binding.target)) {
      throw invalid(`requestState belongs to another request (caller, method or ${binding.method === 'resources/read' ? 'URI' : 'name'}): retry the request it came with`, 'REQUEST_STATE_INVALID');
    }
    if (payload.exp <= this.now()) throw invalid('requestState expired: call again without requestState and inputResponses', 'REQUEST_STATE_EXPIRED');
    return payload.h;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }

  private verify(body: string, mac: string): boolean {
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
