// piscina job (R9): opens a temporary connection to an upstream, initializes,
// lists the first page of each advertised kind, and closes — bounded by the
// server's connect timeout. The live actor and its cache are never involved.
import { Connection, RequestFailure } from '../actor/connection.js';
import type { Era } from '../actor/era-negotiation.js';
import { ProbeExitedError } from '../actor/modern-session.js';
import { openLog } from '../actor/log.js';
import type { TestConnectionReport, TestConnectionTask } from '../../src/protocol/jobs.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { LIST_METHOD, LIST_RESULT_FIELD, PRIMARY_KINDS } from '../../src/protocol/capabilities.js';
import { JSONRPC, messageOf } from '../../src/protocol/errors.js';
import { sanitiseText } from '../../src/protocol/untrusted-text.js';
import { StoredTokenAuth } from './stored-token-auth.js';

export default async function testConnection(task: TestConnectionTask): Promise<TestConnectionReport> {
  const started = Date.now();
  const log = openLog(task.logFile, task.config.name);
  log.note('test connection: opening a temporary connection');
  const deadline = started + task.config.timeouts.connect_ms;
  // Set inside open(), so not narrowed to null here.
  let connection = null as Connection | null;
  const auth = task.oauth ? new StoredTokenAuth(task.config.name, task.oauth.accessToken) : null;
  try {
    const open = async (config: ServerConfig, knownEra: Era | null): Promise<Connection> => {
      // A test connection has no client to relay to: it declares nothing, and the jsonrpc session refuses server requests.
      const opened = (connection = await Connection.create(config, log, { onLost: () => undefined, onNotification: () => undefined }, {}, auth, knownEra));
      const connecting = opened.connect();
      // Spawned by now (connect starts the transport before it first waits).
      if (opened.pid !== null) task.pids?.postMessage(opened.pid);
      await connecting;
      return opened;
    };
    const ready = await open(task.config, null).catch(async (error: unknown) => {
      // As the live actor does: a 2025-era server that exited on the 2026 probe is started again to say initialize, in the time left.
      if (!(error instanceof ProbeExitedError)) throw error;
      log.note(`${error.message}: starting it again for the 2025 era`);
      await connection?.close();
      return open({ ...task.config, timeouts: { ...task.config.timeouts, connect_ms: Math.max(1, deadline - Date.now()) } }, 'legacy');
    });
    const capabilities: NonNullable<TestConnectionReport['capabilities']> = { tools: null, resources: null, prompts: null };
    // Resource templates are not counted: each primary kind is also the server capability that advertises it.
    for (const kind of PRIMARY_KINDS) {
      if (!ready.capabilities[kind]) continue;
      try {
        const result = await ready.request(LIST_METHOD[kind], undefined, { timeoutMs: Math.max(1, deadline - Date.now()) });
        const items = result[LIST_RESULT_FIELD[kind]];
        capabilities[kind] = Array.isArray(items) ? items.length : 0;
      } catch (error) {
        // -32601: advertised but "none of that kind" (R7), not a failed connection.
        if (!(error instanceof RequestFailure && error.rpc?.code === JSONRPC.METHOD_NOT_FOUND)) throw error;
      }
    }
    return {
      ok: true,
      latency_ms: Date.now() - started,
      protocol_version: ready.protocolVersion,
      server_info: ready.serverInfo,
      capabilities,
    };
  } catch (error) {
    log.note(`test connection failed: ${messageOf(error)}`);
    const signIn = auth?.signInNeeded() ?? null;
    return {
      ok: false,
      latency_ms: Date.now() - started,
      protocol_version: connection?.protocolVersion ?? null,
      server_info: connection?.serverInfo ?? null,
      capabilities: null,
      // The upstream's own error text is in it: bounded and made visible, as in a status's last_error.
      error: signIn !== null ? { code: 'UPSTREAM_AUTH_REQUIRED', message: signIn } : { code: 'UPSTREAM_UNAVAILABLE', message: sanitiseText(messageOf(error)) },
    };
  } finally {
    await connection?.close();
    await log.close();
    task.pids?.close();
  }
}
