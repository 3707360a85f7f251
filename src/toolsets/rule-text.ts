// A toolset's rules as people type them, one list per kind: whole servers
// (`fs`), includes and excludes (`fs/tool:read_*`). `coffer toolset` takes
// them as flags, the web UI's form as lines. Pure.
import type { ToolsetServerRule } from '../protocol/toolsets.js';

export interface RuleText {
  server?: string[];
  include?: string[];
  exclude?: string[];
}

/** How a malformed entry is reported: the caller's own error (a usage error, a form message). */
export type RuleTextFailure = (list: 'include' | 'exclude', message: string) => Error;

/** `S/PATTERN` split at the first '/' (server names have none; patterns may). */
function serverPattern(text: string, list: 'include' | 'exclude', fail: RuleTextFailure): [string, string] {
  const at = text.indexOf('/');
  if (at <= 0 || at === text.length - 1) throw fail(list, `'${text}': expected SERVER/PATTERN, e.g. fs/tool:read_*`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/** The rules the lists give (whole servers first, then those only patterns name); undefined when none is given. */
export function rulesOf(values: RuleText, fail: RuleTextFailure): ToolsetServerRule[] | undefined {
  const rules = new Map<string, ToolsetServerRule>();
  const rule = (server: string) => rules.get(server) ?? rules.set(server, { server }).get(server)!;
  for (const server of values.server ?? []) rule(server);
  for (const list of ['include', 'exclude'] as const) {
    for (const text of values[list] ?? []) {
      const [server, pattern] = serverPattern(text, list, fail);
      (rule(server)[list] ??= []).push(pattern);
    }
  }
  return rules.size === 0 ? undefined : [...rules.values()];
}

/** The inverse of rulesOf: a server without includes is listed whole (its excludes still narrow it). */
export function ruleText(rules: readonly ToolsetServerRule[]): Required<RuleText> {
  return {
    server: rules.filter((rule) => rule.include === undefined).map((rule) => rule.server),
    include: rules.flatMap((rule) => (rule.include ?? []).map((pattern) => `${rule.server}/${pattern}`)),
    exclude: rules.flatMap((rule) => (rule.exclude ?? []).map((pattern) => `${rule.server}/${pattern}`)),
  };
}
