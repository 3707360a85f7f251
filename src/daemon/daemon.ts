// Starts and stops the coffer daemon: DB writer, preference snapshot, actor
// pool, router, MCP sessions and the HTTP server, in that order; stops them in
// reverse, letting open calls finish first.
import { join } from 'node:path';
import { HttpApi } from '../api/http-api.js';
import { daemonRoutes, type DaemonStatus } from '../api/routes/daemon.js';
import { auditRoutes } from '../api/routes/audit.js';
import { clientRoutes } from '../api/routes/clients.js';
import { invocationRoutes } from '../api/routes/invocations.js';
import { retentionRoutes } from '../api/routes/retention.js';
import { capabilityRoutes } from '../api/routes/capabilities.js';
import { serverRoutes } from '../api/routes/servers.js';
import { configRoutes } from '../api/routes/config.js';
import { toolsetRoutes } from '../api/routes/toolsets.js';
import { ConnectionTester } from '../jobs/connection-tester.js';
import { CapabilityService } from '../registry/capabilities.js';
import { openRestartingWriter } from '../db/restarting-writer.js';
import { DAEMON_CREDENTIAL_ID, McpAuth, type McpAuthMode } from '../http/mcp-auth.js';
import { LOOPBACK, startHttpServer, type HttpServer } from '../http/server.js';
import { OAUTH_CALLBACK_PATH } from '../oauth/callback-page.js';
import { oauthRecords, signInServers, storedRecord } from '../oauth/records.js';
import { SignIns } from '../oauth/sign-ins.js';
import { oauthRoutes } from '../api/routes/oauth.js';
import { nativeBindingLoaded } from '../http/uws.js';
import { Logger, type LogLevel } from '../log.js';
import { SessionClientLink } from '../mcp/client-link.js';
import { Dispatcher } from '../mcp/dispatcher.js';
import { SessionRegistry } from '../mcp/sessions.js';
import { SessionTags } from '../mcp/session-tag.js';
import { ModernEndpoint } from '../mcp/modern/endpoint.js';
import { EraClientLink } from '../mcp/modern/link.js';
import { ModernMethods } from '../mcp/modern/methods.js';
import { actorCodeCacheDir, MIGRATIONS_DIR, upstreamLogDir } from '../paths.js';
import { VERSION } from '../version.js';
import { DEFAULT_ACTOR_TUNING, type ActorTuning } from '../protocol/actor.js';
import { CofferError } from '../protocol/errors.js';
import { Registry } from '../registry/registry.js';
import { LoginCodes } from '../ui/login-codes.js';
import { uiRoutes } from '../ui/routes.js';
import { PreferenceGate } from '../router/preference-gate.js';
import { createRouting } from '../router/routing.js';
import { holdingsOf } from '../toolsets/holdings.js';
import { setupToolsets } from '../toolsets/setup.js';
import { SearchMode, type ToolsMode } from '../search/search-mode.js';
import { applyEngineFlags, DEFAULT_ENGINE_FLAGS } from '../upstreams/engine-flags.js';
import { UpstreamPool } from '../upstreams/pool.js';
import { Operations } from '../ops/operations.js';
import { opsSettings, type MetricsMode } from '../ops/ops-settings.js';
import { applyStartConfig, readStartConfig } from '../config-file/daemon-hook.js';
import { fileGuardedServers } from '../config-file/guard.js';
import { fileGuardedToolsets } from '../config-file/toolset-guard.js';
import type { ConfigFileSync } from '../config-file/sync.js';
import { announce } from './announce.js';
import { EventBus } from './event-bus.js';
import { InvocationLog } from './invocation-log.js';
import { daemonStatus } from './status.js';
import { acquireDaemonLock, DaemonRunningError } from './daemon-lock.js';
import { checkNoneOpening, daemonAlive, ensureHome, markDatabaseOpening, newToken, readDaemonFile, removeDaemonFile, thisProcess, tokenProof, writeDaemonFile } from './daemon-file.js';

export interface DaemonOptions {
  home: string;
  /**
   * Must be free (PortTakenError otherwise): a client configured for it must never reach another program.
   * Default: DEFAULT_PORT, or the first free of the DEFAULT_PORT_RANGE after it, with a warning. 0 picks any free port (tests).
   */
  port?: number;
  logLevel?: LogLevel;
  /** Log to stderr instead of $home/logs/daemon.log. */
  logToStderr?: boolean;
  tuning?: Partial<ActorTuning>;
  /** Items per page of a merged list. */
  pageSize?: number;
  /** The longest exposed tool or prompt name (default 64; 51 when a host adds `mcp__coffer__`). */
  nameBudget?: number;
  /** What /mcp lists: every tool ('full', default) or the search meta-tools; a toolset has its own mode. */
  toolsMode?: ToolsMode;
  /** What /mcp in search mode lists beside the meta-tools: pins `SERVER/tool:<glob>`; a toolset has its own. */
  pinnedTools?: string[];
  /** How long stop() lets open calls finish. */
  drainMs?: number;
  /** SSE keep-alive interval on /mcp (default 5 s); a call running longer switches its answer to SSE. */
  keepAliveMs?: number;
  /** 'token' (default): /mcp wants a client's or the daemon's token. 'none': anyone who reaches 127.0.0.1 may use it. */
  mcpAuth?: McpAuthMode;
  /** /metrics: default from COFFER_METRICS / COFFER_METRICS_AUTH, else 'token' (src/ops/ops-settings.ts). */
  metrics?: MetricsMode;
  /** OTLP/HTTP traces URL; default from OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, else none (no tracing). null: none. */
  otlpEndpoint?: string | null;
  /** A config file (YAML or JSON) declaring servers: applied at start, then watched. */
  configFile?: string;
  /** V8 options for the actor isolates (process-wide), default DEFAULT_ENGINE_FLAGS. */
  engineFlags?: readonly string[];
}

export interface RunningDaemon {
  port: number;
  token: string;
  /** Graceful: open calls finish (up to drainMs) or fail cleanly, actors and their children stop. Idempotent. */
  stop(): Promise<void>;
  /** Resolves once the daemon has stopped, whoever asked. */
  stopped: Promise<void>;
}

export const DEFAULT_PORT = 7077;
/** Ports tried from DEFAULT_PORT on when no port is given. */
const DEFAULT_PORT_RANGE = 10;

export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const tightened = ensureHome(options.home);
  const unlock = acquireDaemonLock(options.home);
  try {
    return await runDaemon(options, tightened, unlock);
  } catch (error) {
    unlock();
    throw error;
  }
}

/** `unlock` releases the home's daemon lock: once stopped. */
async function runDaemon(options: DaemonOptions, tightened: string[], unlock: () => void): Promise<RunningDaemon> {
  const home = options.home;
  const existing = readDaemonFile(home);
  if (existing && existing.pid !== process.pid && daemonAlive(existing)) throw new DaemonRunningError(existing.pid, home, existing.port);
  // One still opening (upgrading) the database has no daemon.json yet.
  checkNoneOpening(home);
  // Before anything opens: an invalid file stops the start with its line and column.
  const startConfig = readStartConfig(options.configFile);
  const log = new Logger(options.logToStderr ? null : join(home, 'logs', 'daemon.log'), options.logLevel ?? 'info');
  for (const note of tightened) log.warn('COFFER_HOME tightened', { change: note });
  // Before the first worker (the DB writer's included) starts: V8 reads them as each isolate compiles.
  const engineFlags = options.engineFlags ?? DEFAULT_ENGINE_FLAGS;
  applyEngineFlags(engineFlags);
  log.info('V8 options for the actors', { flags: engineFlags.length > 0 ? engineFlags.join(' ') : "none (V8's own)" });
  const startedAt = new Date().toISOString();
  // This process as daemon.json names it, written at start and at every token rotation: its start never changes.
  const self = thisProcess();
  let phase: DaemonStatus['status'] = 'starting';
  const operations = new Operations(opsSettings({ metrics: options.metrics, otlpEndpoint: options.otlpEndpoint }));
  const sessionTags = new SessionTags();
  await operations.startTracing(VERSION, sessionTags);

  const bus = new EventBus();
  const unmark = markDatabaseOpening(home);
  const opened = await openRestartingWriter(
    { dbPath: join(home, 'coffer.db'), migrationsDir: MIGRATIONS_DIR, keyPath: join(home, 'secret.key') },
    {
      onDeath: (error) => log.error('DB writer died; restarting it', { error: error.message }),
      onRestartWait: ({ attempt, delayMs }) => log.warn('DB writer replacement scheduled', { attempt, in_ms: delayMs }),
      onRestart: () => log.info('DB writer restarted'),
      onAudit: (entry) => bus.publish({ type: 'audit', entry }),
      onPrune: (pruned) => log.debug('pruned', pruned),
      onPruneError: (error) => log.warn('periodic prune failed', { error: error.message }),
      onCall: operations.dbCall,
    },
  ).finally(unmark);
  if (!opened.ok) throw new Error(`cannot open the database in ${home}: ${opened.error.message}`);
  const writer = opened.value;

  const tuning: ActorTuning = { ...DEFAULT_ACTOR_TUNING, ...options.tuning };
  const pool = new UpstreamPool(tuning, { logs: upstreamLogDir(home), codeCache: actorCodeCacheDir(home) }, log, undefined, oauthRecords(writer.api, log));
  // The registry is created below; the gate and the router only ask it once lists flow.
  let registry: Registry | null = null;
  const servers = { config: (server: string) => registry?.config(server), all: () => registry?.all() ?? [] };
  const gate = new PreferenceGate(writer.api, (server) => registry?.config(server)?.auto_enable_new_capabilities ?? true, log);
  gate.load(await writer.api.getPreferences());
  const invocationLog = new InvocationLog(writer.api, {}, (error) => log.warn('invocation log', { error: error.message }));
  // The sessions are created below; nothing is announced before upstreams start.
  const announcer = announce(pool, invocationLog, { bus, log, sessions: { broadcast: (message) => toolsetParts.notifier.broadcast(message) }, sessionTags });
  const routing = createRouting(pool, gate, servers, {
    cacheTtlMs: tuning.cacheTtlMs,
    nameBudget: options.nameBudget,
    onInvocation: (record) => (operations.invocation(record), announcer.invocation(record)),
    toolsetOf: (name) => toolsetParts.toolsets.viewOf(name),
    onError: (message, context) => log.warn(message, context),
  });
  announcer.follow(routing.router);
  const toolsetParts = setupToolsets({ writer: writer.api, servers, router: routing.router, bus, log, sessions: () => sessions, auth: () => mcpAuth });
  await toolsetParts.toolsets.load();
  const search = new SearchMode(routing.router, options.toolsMode ?? 'full', options.pinnedTools ?? [], log);
  const dispatcher = new Dispatcher({ ...routing, views: toolsetParts.views, search }, { version: VERSION, pageSize: options.pageSize, onAnswered: operations.requestAnswered, tracing: operations.tracing }, log);
  const keepAliveMs = options.keepAliveMs ?? 5_000;
  const modern = new ModernEndpoint(new ModernMethods({ ...routing, views: toolsetParts.views, search, version: VERSION, pageSize: options.pageSize }), routing.features, toolsetParts.views, { keepAliveMs, version: VERSION, onAnswered: operations.requestAnswered, tracing: operations.tracing }, log);
  const sessions = new SessionRegistry(
    dispatcher,
    { maxBodyBytes: 64 * 1024 * 1024, keepAliveMs, idleTimeoutMs: 60 * 60_000, onSessionClosed: (session) => dispatcher.sessionClosed(session), modern, sessionTags },
    log,
  );
  routing.clientMessages.connect(new EraClientLink(new SessionClientLink((id) => sessions.session(id), log), (id) => modern.target(id)));

  const signIns = new SignIns(
    pool,
    () => `http://${LOOPBACK}:${http!.port}${OAUTH_CALLBACK_PATH}`,
    (actor, event, server) => {
      writer.api.audit(actor, event, server, {}).catch((error: Error) => log.warn('audit failed', { event, error: error.message }));
    },
    signInServers(writer.api, (server) => registry?.config(server)),
  );
  registry = new Registry(writer.api, pool, {
    nameBudget: options.nameBudget,
    isDegraded: (server) => routing.router.degradedServers().includes(server),
    surfaceChanged: (server, action) => {
      routing.serverChanged(server, action === 'removed' || registry?.config(server)?.enabled === false);
      if (action === 'removed') {
        gate.forget(server);
        signIns.forget(server);
        operations.serverRemoved(server);
      }
      announcer.serverChanged(server, action);
    },
  });
  const capabilities = new CapabilityService(writer.api, pool, gate, routing.router.upstreamLists, {
    listChanged: (kind) => announcer.listChanged(kind),
    preferenceChanged: (server, change) => bus.publish({ type: 'preference', server, ...change, at: new Date().toISOString() }),
    exposedName: (server, key) => routing.router.namespaces.exposedName(server, key),
    ownNameProblem: (server, name) => routing.router.namespaces.ownNameProblem(server, name),
    wordsChanged: (server, row) =>
      bus.publish({ type: 'words', server, capability_type: row.capability_type, capability_key: row.capability_key, own_name: row.own_name, own_description: row.own_description, at: new Date().toISOString() }),
  });
  const tester = new ConnectionTester(upstreamLogDir(home), (server) => storedRecord(writer.api, server));
  operations.attach({ writer, pool, router: routing.router, sessions, configs: () => registry?.all() ?? [], registered: (server) => registry?.config(server) !== undefined });
  let configSync: ConfigFileSync | null = null;
  // The routes exist before the file is applied; they ask the sync once it runs.
  const fileOwnership = {
    ownerOf: (name: string) => configSync?.ownerOf(name) ?? null,
    toolsetOwner: (name: string) => configSync?.toolsetOwner(name) ?? null,
    declared: (name: string) => configSync?.declared(name),
  };

  let token = newToken();
  const mcpAuth = new McpAuth(options.mcpAuth ?? 'token', () => token);
  mcpAuth.load(await writer.api.listClients());
  if (mcpAuth.mode === 'none') log.warn('MCP AUTHENTICATION IS OFF: any local process (any user) can list and call every tool on /mcp as this user', { mcp_auth: 'none' });
  let http: HttpServer | null = null;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | null = null;

  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      phase = 'stopping';
      log.info('stopping');
      await sessions.drain(options.drainMs ?? 5_000);
      await sessions.closeAll();
      await configSync?.close();
      await invocationLog.close();
      await pool.stopAll();
      await tester.close();
      http?.close();
      await writer.close();
      await operations.close();
      removeDaemonFile(home, process.pid);
      unlock();
      log.info('stopped');
      await log.close();
      resolveStopped();
    })());

  const api = new HttpApi(
    [
      ...daemonRoutes({
        status: async () =>
          daemonStatus({ phase, version: VERSION, startedAt, port: http?.port ?? 0, configs: registry!.all(), statuses: pool.statuses(), degraded: routing.router.degradedServers() }),
        prove: (challenge) => tokenProof(token, challenge),
        readiness: () => operations.readiness(true),
        requestShutdown: () => void stop(),
        rotateToken: async (actor) => {
          // daemon.json first: a token it does not hold would lock out the CLI and every shim.
          const next = newToken();
          try {
            writeDaemonFile(home, { port: http!.port, ...self, token: next, started_at: startedAt });
          } catch (error) {
            const cause = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
            throw new CofferError('INTERNAL', `daemon.json could not be written (${cause}): the token was not rotated and still works; make room in ${home} and try again`);
          }
          token = next;
          // Whoever held the old token keeps nothing open with it: its streams would go on hearing list changes, updates and logs.
          sessions.closeCredential(DAEMON_CREDENTIAL_ID);
          await writer.api.audit(actor, 'token_rotated', null, {});
          return token;
        },
      }),
      ...serverRoutes(startConfig ? fileGuardedServers(registry, fileOwnership) : registry),
      ...configRoutes(registry, toolsetParts.toolsets, { status: () => configSync?.status() ?? null, declared: (name) => configSync?.declared(name) }),
      ...capabilityRoutes(capabilities, registry, tester),
      ...auditRoutes(writer.api),
      ...invocationRoutes(writer.api, () => invocationLog.flush()),
      ...retentionRoutes(writer.api),
      ...toolsetRoutes(startConfig ? fileGuardedToolsets(toolsetParts.toolsets, fileOwnership) : toolsetParts.toolsets, writer.api, (name) => holdingsOf(name, toolsetParts.views, () => routing.router.degradedServers())),
      ...clientRoutes(writer.api, {
        added: (client) => mcpAuth.added(client),
        revoked: (name) => {
          const credential = mcpAuth.revoked(name);
          if (credential !== null) sessions.closeCredential(credential);
        },
      }),
      ...uiRoutes(new LoginCodes(), () => token),
      ...oauthRoutes(signIns),
    ],
    () => token,
  );

  try {
    http = await startHttpServer(
      { port: options.port ?? DEFAULT_PORT, portRange: options.port === undefined ? DEFAULT_PORT_RANGE : 1, mcpMaxBodyBytes: 64 * 1024 * 1024, apiMaxBodyBytes: 1024 * 1024 },
      api,
      sessions,
      mcpAuth,
      log,
      {
        bus,
        token: () => token,
        refresh: (server) => capabilities.view(server, true),
        test: async (server) => {
          const config = registry!.config(server);
          if (!config) throw new CofferError('RESOURCE_NOT_FOUND', `no server named '${server}': see 'coffer mcp list'`);
          return tester.test(config);
        },
      },
      operations.endpoints(() => token, log),
      toolsetParts.toolsets,
      (query) => signIns.callback(query),
    );
  } catch (error) {
    await invocationLog.close();
    await tester.close();
    await writer.close();
    await log.close();
    throw error;
  }
  if (options.port === undefined && http.port !== DEFAULT_PORT) {
    log.warn('default port taken: listening on another one; clients configured for the default reach whatever holds it', { default_port: DEFAULT_PORT, port: http.port });
  }
  // Upstreams start once clients can reach us; their actors connect in the background.
  configSync = await applyStartConfig(startConfig, registry, {
    home,
    log,
    publish: (event) => bus.publish(event),
    toolsets: toolsetParts.toolsets,
    clients: () => writer.api.listClients(),
    audit: (payload) => writer.api.audit('system', 'config_file_applied', null, payload),
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  writeDaemonFile(home, { port: http.port, ...self, token, started_at: startedAt });
  phase = 'ready';
  log.info('ready', { port: http.port, upstreams: registry.all().length, native_http: nativeBindingLoaded() });
  return {
    port: http.port,
    get token() {
      return token;
    },
    stop,
    stopped,
  };
}
