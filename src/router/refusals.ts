// The errors of a refused capability (R10): each names the switch that refused
// it and the command that turns exactly that switch on.
import { KINDS, type ListKind } from '../protocol/capabilities.js';
import { JSONRPC } from '../protocol/errors.js';
import { joinCommandLine } from '../cli/split.js';
import { RpcError } from '../mcp/rpc-error.js';
import type { ResourceDecision } from './gate.js';

export function describe(kind: ListKind): string {
  return KINDS[kind].label;
}

/** A command line to run as it is: its words shell-quoted where URIs and templates need it (`?`, `&`, braces). */
function command(...words: string[]): string {
  const line = joinCommandLine(['coffer', 'mcp', ...words]);
  return line.includes("'") ? `"${line}"` : `'${line}'`;
}

function refusal(message: string, server: string): RpcError {
  return RpcError.coffer(JSONRPC.TOOL_DISABLED, 'TOOL_DISABLED', message, { server });
}

/** A disabled tool or prompt. */
export function disabledByName(kind: ListKind, server: string, name: string): RpcError {
  return refusal(`${describe(kind)} '${name}' of server '${server}' is disabled in coffer; enable it with ${command('cap', 'enable', server, `${describe(kind)}:${name}`)}`, server);
}

/** A refused resource URI (or template, for completion); templates are switched as resources under their uriTemplate. */
export function disabledResource(server: string, uri: string, decision: ResourceDecision): RpcError {
  const what = `resource '${uri}' of server '${server}'`;
  switch (decision.by) {
    case 'resource':
      return refusal(`${what} is disabled in coffer; enable it with ${command('cap', 'enable', server, `resource:${decision.key}`)}`, server);
    case 'template':
      if (decision.key === uri) return refusal(`resource template '${uri}' of server '${server}' is disabled in coffer; enable it with ${command('cap', 'enable', server, `resource:${uri}`)}`, server);
      return refusal(`${what} is disabled in coffer by its resource template '${decision.key}'; enable the template with ${command('cap', 'enable', server, `resource:${decision.key}`)}`, server);
    case 'policy':
      return refusal(
        `${what} has no switch in coffer (the server has not listed it, and none of its resource templates matches it) and server '${server}' does not enable new capabilities; ` +
          `allow them with ${command('update', server, '--auto-enable')}, or enable the resource or its template once listed (${command('cap', 'list', server)})`,
        server,
      );
  }
}

/** A capability outside the session's toolset: not listed there, not callable there. */
export function notInToolset(kind: ListKind, toolset: string, server: string, key: string): RpcError {
  return RpcError.coffer(
    JSONRPC.NOT_IN_TOOLSET,
    'NOT_IN_TOOLSET',
    `${describe(kind)} '${key}' of server '${server}' is not in toolset '${toolset}'; add it with 'coffer toolset update ${toolset} ...' (see 'coffer toolset show ${toolset}') or use another endpoint`,
    { server, toolset },
  );
}
