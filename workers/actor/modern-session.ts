// The 2026-07-28 era on one upstream connection: the server/discover probe
// that decides the era, the envelope every request then carries, the methods
// that era removed (answered here instead of sent), and the upstream listen
// stream that replaces the GET stream and resources/subscribe.
import { messageOf } from '../../src/protocol/errors.js';
import { declaresExtension, TASKS_EXTENSION } from '../../src/protocol/extensions.js';
import type { ProtocolSetting } from '../../src/protocol/server-config.js';
import type { ActorLog } from './log.js';
import { isObject } from '../../src/protocol/json-object.js';
import { RpcError, SessionClosedError, type JsonRpcSession } from './jsonrpc-session.js';
import { HttpStatusError } from './http-status-error.js';
import { verdictOf, type ProbeOutcome, type Verdict } from './era-negotiation.js';
import { extended } from '../../src/protocol/extended.js';
import { META, modernHeaders, withEnvelope } from '../../src/protocol/modern-envelope.js';
import { toolHeaderParams } from './tool-header-params.js';
import { UpstreamListener, type ListenFilter } from './listener.js';
import type { UpstreamTransport } from './transports.js';

/**
 * The client capabilities coffer can bridge to a modern upstream's
 * input_required results (a legacy caller is asked them as server→client
 * requests, a modern caller gets the result). Each request declares those
 * of them its caller declared; a request of coffer's own (discover, lists)
 * declares none.
 */
const BRIDGED_CAPABILITIES = ['sampling', 'elicitation', 'roots'];

/** What a request declares when its caller declares nothing coffer bridges (most calls, and every request of coffer's own): one shared object. */
const NONE_DECLARED = Object.freeze({}) as Record<string, unknown>;

/** The caller's capabilities that coffer bridges: what a modern upstream is told (the tasks extension too, which the router routes). */
export function bridgedCapabilities(client: Record<string, unknown> | undefined): Record<string, unknown> {
  let declared: Record<string, unknown> | null = null;
  for (const key of BRIDGED_CAPABILITIES) if (client?.[key] !== undefined) (declared ??= {})[key] = client[key];
  if (declaresExtension(client, TASKS_EXTENSION)) (declared ??= {}).extensions = { [TASKS_EXTENSION]: {} };
  return declared ?? NONE_DECLARED;
}

/** The methods whose result may be input_required (the caller's retry is the next round). */
const INPUT_REQUIRED_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** A stdio server that ignores unknown methods never answers the probe: this long is waited before initialize. */
const STDIO_PROBE_MAX_MS = 2_000;

/** The stdio child exited on server/discover: connect again speaking the 2025 era from the start. */
export class ProbeExitedError extends Error {
  constructor() {
    super('the stdio server exited on server/discover');
    this.name = 'ProbeExitedError';
  }
}

function withoutEraMarks(result: Record<string, unknown>): Record<string, unknown> {
  const infoIn = isObject(result._meta) && SERVER_INFO_META in result._meta;
  if (result.resultType !== 'complete' && !infoIn) return result;
  // Rest patterns, not delete: a pruned result would drop into V8's slow dictionary mode.
  const { resultType, _meta, ...rest } = result;
  if (resultType !== undefined && resultType !== 'complete') rest.resultType = resultType;
  const meta = infoIn ? withoutServerInfo(_meta as Record<string, unknown>) : _meta;
  if (meta !== undefined) rest._meta = meta;
  return rest;
}

function withoutServerInfo({ [SERVER_INFO_META]: _info, ...rest }: Record<string, unknown>): Record<string, unknown> | undefined {
  return Object.keys(rest).length === 0 ? undefined : rest;
}

/** The upstream answered input_required where the era does not allow it. */
export class InputRequiredError extends Error {}

export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';
const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

export class ModernSession {
  private listener: UpstreamListener | null = null;
  /** The envelope of a request that declares nothing and has no _meta of its own: made once, shared (the session copies params, never changes them). */
  private readonly bareMeta: unknown;

  constructor(
    private readonly session: JsonRpcSession,
    private readonly upstream: UpstreamTransport,
    private readonly clientInfo: { name: string; version: string },
    private readonly log: ActorLog,
  ) {
    this.bareMeta = Object.freeze(withEnvelope(undefined, NONE_DECLARED, clientInfo)._meta);
  }

  /**
   * Headers on, then server/discover; the verdict turns them off again unless
   * the upstream is modern. `windowed`: give up after the stdio probe window
   * (a stdio server that ignores unknown methods never answers); else wait
   * for the answer, within the connect's own deadline.
   */
  async negotiate(setting: ProtocolSetting, connectMs: number, windowed: boolean): Promise<Verdict> {
    this.upstream.transport.setMessageHeaders?.((message) => modernHeaders(message, (tool) => toolHeaderParams.of(tool)) as Record<string, string>);
    const verdict = verdictOf(await this.probe(windowed ? Math.min(STDIO_PROBE_MAX_MS, Math.floor(connectMs / 3)) : undefined), setting);
    if (verdict.era !== 'modern') this.upstream.transport.setMessageHeaders?.(undefined);
    return verdict;
  }

  private async probe(silenceMs: number | undefined): Promise<ProbeOutcome> {
    const abort = new AbortController();
    const timer = silenceMs === undefined ? undefined : setTimeout(() => abort.abort(new Error('silent')), silenceMs);
    try {
      return { kind: 'result', result: await this.discover(abort.signal) };
    } catch (error) {
      if (abort.signal.aborted) return { kind: 'silent' };
      if (error instanceof RpcError) return { kind: 'rpc-error', code: error.code, message: error.rpcMessage, data: error.data };
      if (error instanceof HttpStatusError) return { kind: 'http-status', status: error.status, message: error.message };
      if (error instanceof SessionClosedError) return { kind: 'exited' };
      return { kind: 'failed', message: messageOf(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The probe, and the liveness check of a modern session (ping is gone in that era). */
  discover(signal?: AbortSignal): Promise<Record<string, unknown>> {
    return this.session.request('server/discover', this.envelope(undefined, undefined), { signal });
  }

  /** `client`: the capabilities of the caller the request is for (none for coffer's own); `logLevel`: the log messages it wants. */
  envelope(params: Record<string, unknown> | undefined, client: Record<string, unknown> | undefined, logLevel?: string): Record<string, unknown> {
    const declared = bridgedCapabilities(client);
    if (declared === NONE_DECLARED && logLevel === undefined && params?._meta === undefined) return extended(params ?? {}, { _meta: this.bareMeta });
    return withEnvelope(params, declared, this.clientInfo, logLevel);
  }

  /**
   * Methods the modern era removed, answered here: the log level goes per
   * request (the caller's, in the envelope), subscriptions go on the listen stream.
   * Undefined: send the request.
   */
  answerLocally(method: string, params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
    const uri = typeof params?.uri === 'string' ? params.uri : undefined;
    switch (method) {
      case 'logging/setLevel':
        return {};
      case 'resources/subscribe':
        if (uri !== undefined) this.listener?.subscribe(uri);
        return {};
      case 'resources/unsubscribe':
        if (uri !== undefined) this.listener?.unsubscribe(uri);
        return {};
      default:
        return undefined;
    }
  }

  /**
   * A modern result as coffer's router expects one: input_required only where
   * the era allows it (the router bridges it), and without what only marks
   * the era: resultType "complete" (what a result without one is) and the
   * upstream's serverInfo (coffer answers a modern caller as itself; a 2025
   * client has neither), which would otherwise cross to the main thread on
   * every call.
   */
  checkResult(method: string, result: Record<string, unknown>): Record<string, unknown> {
    if (result.resultType === 'input_required' && !INPUT_REQUIRED_METHODS.has(method)) {
      throw new InputRequiredError(`${method}: the upstream answered input_required, which MCP 2026-07-28 allows only for tools/call, prompts/get and resources/read`);
    }
    return withoutEraMarks(result);
  }

  /** Server notifications: true when consumed here (the listen ack); else `params` lose the listen's subscription tag. */
  notification(method: string, params: unknown): { consumed: true } | { consumed: false; params: unknown } {
    if (method === ACKNOWLEDGED) {
      this.listener?.acknowledged();
      return { consumed: true };
    }
    if (!isObject(params) || !isObject(params._meta) || !(META.subscriptionId in params._meta)) return { consumed: false, params };
    const { [META.subscriptionId]: _tag, ...meta } = params._meta;
    const { _meta: _old, ...rest } = params;
    return { consumed: false, params: Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest };
  }

  /** Opens the listen stream for what the upstream can announce; `onReopened`: notifications may have been missed. */
  listen(capabilities: Record<string, unknown>, onReopened: () => void): void {
    const changes = (kind: string): boolean => isObject(capabilities[kind]) && (capabilities[kind] as { listChanged?: unknown }).listChanged === true;
    const filter: ListenFilter = {
      ...(changes('tools') ? { toolsListChanged: true } : {}),
      ...(changes('prompts') ? { promptsListChanged: true } : {}),
      ...(changes('resources') ? { resourcesListChanged: true } : {}),
    };
    let next = 0;
    const listen = this.upstream.listen;
    const open = (notifications: Record<string, unknown>, signal: AbortSignal): Promise<unknown> => {
      const params = this.envelope({ notifications }, undefined);
      if (listen) return listen({ jsonrpc: '2.0', id: `coffer-listen-${next++}`, method: 'subscriptions/listen', params }, signal);
      return this.session.request('subscriptions/listen', params, { signal });
    };
    this.listener = new UpstreamListener(open, filter, (text) => this.log.note(text), onReopened);
    this.listener.start();
  }

  close(): void {
    this.listener?.stop();
  }
}
