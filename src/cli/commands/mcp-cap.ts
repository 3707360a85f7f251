// `coffer mcp cap list|enable|disable|set`, `coffer mcp refresh` (over the admin
// WebSocket, with progress), `coffer mcp test`: a server's capabilities (live
// lists joined with the stored preferences) and its connection.
import type { AdminClient, AdminConnectionError } from '../../admin/client.js';
import { daemonFilePath } from '../../daemon/daemon-file.js';
import { ADMIN_CLOSE, type ProgressMessage } from '../../protocol/admin.js';
import { CAPABILITY_TYPES, KINDS, LIST_KINDS, type CapabilitiesView, type CapabilityType } from '../../protocol/capabilities.js';
import { ERROR_HTTP_STATUS } from '../../protocol/errors.js';
import { daemonUnreachable, type ApiClient } from '../api-client.js';
import { expectPositionals } from '../args.js';
import { formatCapabilityRef, parseCapabilityRefs, REF_SYNTAX, type CapabilityRef } from '../cap-ref.js';
import { actionGroup, defineAction, type Action, type ActionContext } from '../command.js';
import { EXIT, exitCodeForApiError, type ExitCode } from '../exit-codes.js';
import { CliError, printFields, printJson, printLine, printMessage, printTable } from '../output.js';
import { capSet } from './mcp-cap-words.js';
import { serverPath } from './mcp-shared.js';

/** details.known of a 503 UPSTREAM_UNAVAILABLE / 504 UPSTREAM_TIMEOUT (R6). */
export interface KnownCapability {
  capability_type: CapabilityType;
  capability_key: string;
  enabled: boolean;
  last_seen_at: string | null;
}

interface TestResult {
  ok: boolean;
  latency_ms: number;
  protocol_version?: string | null;
  server_info?: { name?: string; version?: string } | null;
  /** Items on the first page of each advertised list; null when not advertised. */
  capabilities?: Record<string, number | null> | null;
  error?: unknown;
}

/** Per kind: its field in the view, its heading, its REF prefix. */
const SECTIONS = LIST_KINDS.map((kind) => [KINDS[kind].viewField, `${KINDS[kind].label}s`, KINDS[kind].preferenceType] as const);

const UPSTREAM_DOWN = ['UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'UPSTREAM_AUTH_REQUIRED'];

/** An error field of the API: a string or {code, message}. */
function describeError(error: unknown): string {
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof message === 'string') return typeof code === 'string' ? `${code}: ${message}` : message;
  }
  return JSON.stringify(error);
}

const yesNo = (value: boolean): string => (value ? 'yes' : 'no');

function printCapabilities(view: CapabilitiesView): void {
  printLine(`server '${view.server}'`);
  for (const [field, label, type] of SECTIONS) {
    const kind = view[field];
    if (!kind) continue;
    const enabled = kind.items.filter((item) => item.enabled).length;
    let heading: string;
    if (kind.state === 'unsupported') heading = 'unsupported (the server offers none)';
    else if (kind.state === 'failed') heading = `failed: ${describeError(kind.error ?? 'unknown error')} (try \`coffer mcp test ${view.server}\` or \`coffer mcp refresh ${view.server}\`)`;
    else heading = kind.items.length === 0 ? 'live, none' : `live, ${kind.items.length} (${enabled} enabled)`;
    printLine(`${label}: ${heading}`);
    if (kind.items.length === 0) continue;
    // Tools and prompts also show the name clients see (namespaced, fitted to the name budget; `*`: the user's own name).
    const named = kind.items.some((item) => typeof item.exposed_name === 'string');
    printTable(
      [
        ['REF', 'ENABLED', 'LIVE', 'LAST SEEN', ...(named ? ['EXPOSED AS'] : [])],
        ...kind.items.map((item) => [`${type}:${item.key}`, yesNo(item.enabled), yesNo(item.live), item.last_seen_at ?? '-', ...(named ? [`${String(item.exposed_name)}${typeof item.own_name === 'string' ? ' *' : ''}`] : [])]),
      ],
      '  ',
    );
  }
}

/**
 * Shows a capabilities answer; for an upstream that is down, shows the known keys
 * the error carries (R6) and then fails with that error (exit 1).
 */
async function showCapabilities(request: () => Promise<CapabilitiesView>, json: boolean | undefined): Promise<ExitCode> {
  let view: CapabilitiesView;
  try {
    view = await request();
  } catch (error) {
    if (error instanceof CliError && UPSTREAM_DOWN.includes(error.code)) {
      const known = (error.details as { known?: unknown } | undefined)?.known;
      if (json) printJson({ error: { code: error.code, message: error.message, details: error.details ?? null } });
      else if (Array.isArray(known)) printKnown(known as KnownCapability[]);
    }
    throw error;
  }
  if (json) printJson(view);
  else printCapabilities(view);
  return EXIT.OK;
}

function printKnown(known: KnownCapability[]): void {
  if (known.length === 0) {
    printLine('the upstream is not reachable, and no capability of it is known yet');
    return;
  }
  printLine('the upstream is not reachable; the known capabilities (not live):');
  const sorted = [...known].sort((a, b) => CAPABILITY_TYPES.indexOf(a.capability_type) - CAPABILITY_TYPES.indexOf(b.capability_type));
  printTable(
    [['REF', 'ENABLED', 'LIVE', 'LAST SEEN'], ...sorted.map((k) => [formatCapabilityRef(k), yesNo(k.enabled), 'no', k.last_seen_at ?? '-'])],
    '  ',
  );
}

const capabilitiesPath = (name: string): string => `${serverPath(name)}/capabilities`;

const capList = defineAction(
  'list',
  `list NAME [--json]
      Every capability of a server, per kind (tools, resources, resource
      templates, prompts): the kind's state (live, unsupported, failed) and each
      item's REF, enabled, live, last seen. --json prints the API answer as is.
      With the upstream down: the known capabilities marked not live, then the
      error (exit 1).`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    return showCapabilities(() => api().get<CapabilitiesView>(capabilitiesPath(name!)), values.json);
  },
);

function capSwitch(verb: 'enable' | 'disable'): Action {
  return defineAction(
    verb,
    `${verb} NAME REF... [--json]
      ${verb === 'enable' ? 'Expose' : 'Hide'} capabilities, REF = ${REF_SYNTAX}
      (a resource template by its URI template). All or nothing: every REF is
      checked first (malformed: exit 2; unknown to the server: exit 4, nothing changed).`,
    { json: { type: 'boolean' } },
    async (positionals, values, context) => {
      const [name, ...refs] = positionals;
      if (name === undefined) expectPositionals(positionals, ['NAME']);
      const parsed = parseCapabilityRefs(refs);
      return setPreferences(context, name!, parsed, verb === 'enable', values.json);
    },
  );
}

async function setPreferences(context: ActionContext, name: string, refs: CapabilityRef[], enabled: boolean, json: boolean | undefined): Promise<ExitCode> {
  const changes = refs.map((ref) => ({ ...ref, enabled }));
  const answer = await context.api().patch<{ preferences: unknown[] }>(capabilitiesPath(name), { changes });
  if (json) printJson(answer);
  else printLine(`${enabled ? 'enabled' : 'disabled'} on '${name}': ${refs.map(formatCapabilityRef).join(', ')}`);
  return EXIT.OK;
}

const capSubactions = [capList, capSwitch('enable'), capSwitch('disable'), capSet];
const capGroup = actionGroup('coffer mcp cap', capSubactions);

const cap: Action = {
  name: 'cap',
  usage: capSubactions.map((action) => 'cap ' + action.usage).join('\n\n  '),
  valueOptions: capGroup.valueOptions,
  helpFor: (argv) => capGroup.helpFor(argv),
  run: (argv) => capGroup.run(argv),
};

const refresh = defineAction(
  'refresh',
  `refresh NAME [--json]
      Drop the server's cached lists and list it live, over the admin
      WebSocket: progress on stderr while it waits (not with --json), then
      shown like \`cap list\`. With the upstream down: the known capabilities
      marked not live, then the error (exit 1).`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api, home }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const client = api();
    const onProgress = values.json ? undefined : (progress: ProgressMessage) => printMessage(describeProgress(name!, progress));
    return showCapabilities(() => refreshOverAdmin(home, client, name!, onProgress), values.json);
  },
);

/** `refreshing 'NAME'…` at the start, then `refreshing 'NAME'… (2.0 s)` while it waits. */
function describeProgress(name: string, progress: ProgressMessage): string {
  const head = `refreshing '${name}'…`;
  return progress.stage === 'started' ? head : `${head} (${(progress.elapsed_ms / 1000).toFixed(1)} s)`;
}

/** No frame at all (the daemon sends progress every few seconds) for this long: the daemon is stuck. */
const ADMIN_SILENCE_MS = 60_000;

/**
 * The `refresh` command of the admin WebSocket, its progress passed on (R3: a user refresh).
 * An ok:false result becomes the same CliError as the REST envelope would.
 */
async function refreshOverAdmin(home: string, api: ApiClient, name: string, onProgress?: (progress: ProgressMessage) => void): Promise<CapabilitiesView> {
  // Proven first, as for every REST call: a program on a stopped daemon's port must not get the token in the upgrade.
  const { port, token } = await api.provenDaemon();
  // Loaded here: the WebSocket client is only needed by refresh, and every other command starts faster without it.
  const { AdminConnectionError, connectAdmin } = await import('../../admin/client.js');
  let admin: AdminClient;
  try {
    admin = await connectAdmin({ port, token });
  } catch (error) {
    if (!(error instanceof AdminConnectionError)) throw error;
    // A daemon without the admin WebSocket: the REST route does the same, without progress.
    if (error.code === 'HTTP_404') return api.post<CapabilitiesView>(`${serverPath(name)}/refresh`);
    throw adminFailure(home, port, error);
  }
  let watchdog: NodeJS.Timeout | undefined;
  try {
    const silence = new Promise<never>((_resolve, reject) => {
      const arm = (): void => {
        if (watchdog) clearTimeout(watchdog);
        watchdog = setTimeout(
          () => reject(daemonUnreachable(home, `the coffer daemon on port ${port} sent nothing for ${ADMIN_SILENCE_MS / 1000} s while refreshing '${name}'`)),
          ADMIN_SILENCE_MS,
        );
      };
      arm();
      admin.onProgress(arm);
    });
    const result = await Promise.race([admin.request({ type: 'refresh', server: name }, { onProgress }), silence]).catch((error: unknown) => {
      throw error instanceof AdminConnectionError ? adminFailure(home, port, error) : error;
    });
    if (!result.ok) {
      const { code, message, details } = result.error;
      const status = (ERROR_HTTP_STATUS as Record<string, number>)[code] ?? 500;
      throw new CliError(exitCodeForApiError(status, code), code, message, details);
    }
    return result.data as CapabilitiesView;
  } finally {
    if (watchdog) clearTimeout(watchdog);
    await admin.close().catch(() => undefined);
  }
}

/** A failed admin connection: exit 3 when no daemon answers (or it went away), else exit 1. */
function adminFailure(home: string, port: number, error: AdminConnectionError): CliError {
  if (error.unreachable || error.code === 'TIMEOUT') {
    return daemonUnreachable(home, `the coffer daemon on port ${port} does not answer on its admin WebSocket`, error);
  }
  if (error.code === ADMIN_CLOSE.GOING_AWAY) return daemonUnreachable(home, `the coffer daemon on port ${port} stopped during the command`, error);
  // Like DAEMON_NOT_READY on REST: starting or stopping.
  if (error.code === 'HTTP_503') return daemonUnreachable(home, `the coffer daemon on port ${port} is not ready (starting or stopping)`, error);
  if (error.code === ADMIN_CLOSE.UNAUTHENTICATED || error.code === 'HTTP_401') {
    return new CliError(EXIT.ERROR, 'UNAUTHENTICATED', `${error.message} (the token of ${daemonFilePath(home)} is not the daemon's: was it rotated by another daemon?)`, undefined, error);
  }
  return new CliError(EXIT.ERROR, 'ADMIN_CONNECTION_FAILED', error.message, { code: error.code }, error);
}

const test = defineAction(
  'test',
  `test NAME [--json]
      Test the connection on a temporary one (initialize, lists, close); the live
      connection and its cache are untouched. Exit 7 when the test fails.`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    let result: TestResult;
    try {
      result = await api().post<TestResult>(`${serverPath(name!)}/test`);
    } catch (error) {
      // A daemon that answers a failed test with the upstream error rather than ok:false.
      if (error instanceof CliError && UPSTREAM_DOWN.includes(error.code)) {
        throw new CliError(EXIT.UPSTREAM_TEST_FAILED, error.code, error.message, error.details);
      }
      throw error;
    }
    if (values.json) printJson(result);
    else printTest(result);
    if (!result.ok) {
      // A sign-in is the one failure with its own code: the message says the command that fixes it.
      const code = (result.error as { code?: unknown } | undefined)?.code === 'UPSTREAM_AUTH_REQUIRED' ? 'UPSTREAM_AUTH_REQUIRED' : 'UPSTREAM_TEST_FAILED';
      throw new CliError(EXIT.UPSTREAM_TEST_FAILED, code, `connection test of '${name}' failed: ${describeError(result.error ?? 'no reason given')}`);
    }
    return EXIT.OK;
  },
);

function printTest(result: TestResult): void {
  const info = result.server_info;
  const capabilities = result.capabilities
    ? Object.entries(result.capabilities)
        .map(([kind, count]) => `${kind} ${count ?? '-'}`)
        .join(', ') || '-'
    : undefined;
  printFields([
    ['ok', yesNo(result.ok)],
    ['latency', `${result.latency_ms} ms`],
    ...(result.protocol_version ? ([['protocol', result.protocol_version]] as Array<[string, string]>) : []),
    ...(info ? ([['server', [info.name, info.version].filter(Boolean).join(' ') || '-']] as Array<[string, string]>) : []),
    ...(capabilities !== undefined ? ([['capabilities', capabilities]] as Array<[string, string]>) : []),
    ...(result.error !== undefined && result.error !== null ? ([['error', describeError(result.error)]] as Array<[string, string]>) : []),
  ]);
}

export const capActions: Action[] = [cap, refresh, test];
