// `coffer toolset add|list|show|update|rm`: named views over the merged
// surface, served at /mcp/<toolset> (and by `coffer shim --toolset NAME`).
// Rules are given per server: `--server S` takes all of S, `--include
// S/tool:read_*` and `--exclude S/prompt:*` narrow it; the switches still rule.
import { expectPositionals } from '../args.js';
import { defineAction, groupCommand, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine, printMessage, printTable, usageError } from '../output.js';
import type { ToolsetServerRule } from '../../protocol/toolsets.js';
import { KINDS, LIST_KINDS } from '../../protocol/capabilities.js';
import type { Holdings } from '../../toolsets/holdings.js';
import { rulesOf as rulesText, type RuleText } from '../../toolsets/rule-text.js';

interface ToolsetInfo {
  name: string;
  description: string;
  servers: ToolsetServerRule[];
  mode?: 'full' | 'search';
  pinned?: string[];
  endpoint: string;
  clients: string[];
  updated_at: string;
}

const toolsetPath = (name: string): string => `/toolsets/${encodeURIComponent(name)}`;

const ruleOptions = {
  description: { type: 'string' },
  server: { type: 'string', multiple: true },
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  mode: { type: 'string' },
  pin: { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

const RULE_HELP = `      --server S             all of server S (its switches still apply)
      --include S/PATTERN    only what matches: tool:<glob>, prompt:<glob> or
                             resource:<glob> (* any characters, ? one)
      --exclude S/PATTERN    never what matches (wins over --include)
      --pin S/tool:GLOB      in search mode, list these tools of the set beside
                             the meta-tools (a disabled tool stays hidden)`;

/** The rules the options give; undefined when none is given. */
export const rulesOf = (values: RuleText): ToolsetServerRule[] | undefined => rulesText(values, (flag, message) => usageError(`--${flag} ${message}`));

function printToolset(toolset: ToolsetInfo): void {
  printLine(`${toolset.name}  ${toolset.endpoint}${toolset.description ? `  ${toolset.description}` : ''}`);
  printLine(`mode: ${toolset.mode ?? 'full'}${toolset.mode === 'search' ? ' (tools/list shows coffer__search_tools and coffer__call_tool)' : ''}`);
  if (toolset.pinned?.length) printLine(`pinned: ${toolset.pinned.join(' ')}`);
  printLine(`clients: ${toolset.clients.length === 0 ? '(none bound)' : toolset.clients.join(', ')}`);
  printTable([['SERVER', 'INCLUDE', 'EXCLUDE'], ...toolset.servers.map((rule) => [rule.server, rule.include?.join(' ') ?? '(all)', rule.exclude?.join(' ') ?? ''])]);
}

const add = defineAction(
  'add',
  `add NAME [--description TEXT] (--server S | --include S/PATTERN)... [--exclude S/PATTERN]... [--mode full|search] [--pin S/tool:GLOB]... [--json]
      A toolset: clients of /mcp/NAME see only these capabilities; in search mode
      their tools/list holds coffer__search_tools and coffer__call_tool instead.
${RULE_HELP}
      Exit 5 if NAME exists, 6 if a rule is invalid or names an unknown server.`,
  ruleOptions,
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const servers = rulesOf(values);
    if (!servers) throw usageError('a toolset needs at least one --server or --include');
    const toolset = await api().post<ToolsetInfo>('/toolsets', { name, description: values.description ?? '', servers, ...(values.mode === undefined ? {} : { mode: values.mode }), ...(values.pin === undefined ? {} : { pinned: values.pin }) });
    if (values.json) printJson({ toolset });
    else printMessage(`toolset '${toolset.name}' added: point clients at ${toolset.endpoint} (or 'coffer shim --toolset ${toolset.name}')`);
    return EXIT.OK;
  },
);

const update = defineAction(
  'update',
  `update NAME [--description TEXT] [--server S]... [--include S/PATTERN]... [--exclude S/PATTERN]... [--mode full|search] [--pin S/tool:GLOB]... [--json]
      Rules given replace all of the old ones; --description alone keeps them.
      --pin given replaces the pins (--pin '' clears them).
      Open sessions of the toolset get list_changed where their lists differ.`,
  ruleOptions,
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const servers = rulesOf(values);
    if (!servers && values.description === undefined && values.mode === undefined && values.pin === undefined) throw usageError('nothing to change: give --description, --mode, --pin or rules');
    const toolset = await api().patch<ToolsetInfo>(toolsetPath(name!), {
      ...(servers ? { servers } : {}),
      ...(values.description === undefined ? {} : { description: values.description }),
      ...(values.mode === undefined ? {} : { mode: values.mode }),
      ...(values.pin === undefined ? {} : { pinned: values.pin.filter((pin) => pin !== '') }),
    });
    if (values.json) printJson({ toolset });
    else printToolset(toolset);
    return EXIT.OK;
  },
);

const list = defineAction(
  'list',
  `list [--json]
      Every toolset with its endpoint and the clients bound to it.`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const { toolsets } = await api().get<{ toolsets: ToolsetInfo[] }>('/toolsets');
    if (values.json) printJson({ toolsets });
    else printTable([['NAME', 'ENDPOINT', 'SERVERS', 'CLIENTS'], ...toolsets.map((toolset) => [toolset.name, toolset.endpoint, toolset.servers.map((rule) => rule.server).join(','), toolset.clients.join(',')])]);
    return EXIT.OK;
  },
);

/** What the set holds now, one row per capability, and the servers whose part could not be listed. */
function printHoldings(holds: Holdings): void {
  const rows = LIST_KINDS.flatMap((kind) => holds[KINDS[kind].viewField].map((identity) => [KINDS[kind].label, identity]));
  if (rows.length === 0) printLine('holds now: nothing');
  else printTable([['HOLDS NOW', 'NAME OR URI'], ...rows]);
  if (holds.left_out.length > 0) printLine(`not shown: what ${holds.left_out.join(', ')} hold${holds.left_out.length === 1 ? 's' : ''} (left out of a list just now: see 'coffer mcp show NAME')`);
}

const show = defineAction(
  'show',
  `show NAME [--holds] [--json]
      Its rules, endpoint and bound clients. Exit 4 if unknown.
      --holds                also what it holds now: the tools, prompts, resources
                             and templates its clients reach (listed live, after
                             the switches; in search mode, what a search finds)`,
  { holds: { type: 'boolean' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    const toolset = await api().get<ToolsetInfo>(toolsetPath(name!));
    const holds = values.holds ? (await api().get<{ holds: Holdings }>(`${toolsetPath(name!)}/holds`)).holds : undefined;
    if (values.json) printJson(holds ? { toolset, holds } : { toolset });
    else {
      printToolset(toolset);
      if (holds) printHoldings(holds);
    }
    return EXIT.OK;
  },
);

const rm = defineAction(
  'rm',
  `rm NAME
      Its open sessions see nothing from now on. Refused (exit 5) while a client
      is bound to it: 'coffer client bind CLIENT --none' first.`,
  {},
  async (positionals, _values, { api }) => {
    const [name] = expectPositionals(positionals, ['NAME']);
    await api().delete(toolsetPath(name!));
    printLine(`toolset '${name}' removed`);
    return EXIT.OK;
  },
);

export const toolsetCommand: Command = groupCommand('toolset', 'named views over the merged surface, served at /mcp/<toolset>: add, list, show, update, rm', [add, list, show, update, rm]);
