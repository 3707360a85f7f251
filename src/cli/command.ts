// One top-level command (a group such as `mcp` or `daemon`): adding one is a new
// file under commands/ plus one line in main.ts's list. A group's actions
// (`coffer mcp add ...`) each parse their own options.
import { resolveHome } from '../daemon/daemon-file.js';
import { ApiClient } from './api-client.js';
import { parseCommandArgs, splitAction, type OptionSpecs, type ParsedArgs } from './args.js';
import type { ExitCode } from './exit-codes.js';
import { usageError } from './output.js';

export interface Command {
  name: string;
  /** One line for `coffer --help`. */
  summary: string;
  /** Full help of the command, printed for `coffer <name> --help`. */
  usage: string;
  /** Help for `coffer <name> <action...> --help`, when the command has actions of its own. */
  helpFor?(argv: string[]): string | null;
  run(argv: string[]): Promise<ExitCode>;
}

/** What an action's handler gets: its home and a lazily found daemon (usage errors come first). */
export interface ActionContext {
  home: string;
  api(): ApiClient;
}

export interface Action {
  name: string;
  /** Its help: synopsis lines then description, as shown under the group's usage. */
  usage: string;
  /** Options that take a value (so the action word is found past them). */
  valueOptions: readonly string[];
  helpFor?(argv: string[]): string | null;
  run(argv: string[]): Promise<ExitCode>;
}

export function defineAction<S extends OptionSpecs>(
  name: string,
  usage: string,
  options: S,
  handler: (positionals: string[], values: ParsedArgs<S>['values'], context: ActionContext) => Promise<ExitCode>,
): Action {
  return {
    name,
    usage,
    valueOptions: Object.entries(options)
      .filter(([, spec]) => spec.type === 'string')
      .map(([option]) => option),
    async run(argv) {
      const { values, positionals } = parseCommandArgs(argv, options);
      const home = resolveHome(values.home);
      return handler(positionals, values, { home, api: () => ApiClient.forHome(home) });
    },
  };
}

/** `<group> <action> ...`: finds the action word and hands it the rest of the line. */
export function actionGroup(group: string, actions: Action[]): Pick<Action, 'valueOptions' | 'run'> & { helpFor(argv: string[]): string | null } {
  const valueOptions = [...new Set(actions.flatMap((action) => action.valueOptions))];
  const names = actions.map((action) => action.name).join(', ');
  const find = (argv: string[]): { action: Action | undefined; word: string | undefined; rest: string[] } => {
    const { action: word, rest } = splitAction(argv, valueOptions);
    return { action: actions.find((candidate) => candidate.name === word), word, rest };
  };
  return {
    valueOptions,
    helpFor(argv) {
      const { action, rest } = find(argv);
      if (!action) return null;
      return action.helpFor?.(rest) ?? `Usage: ${group} ${action.usage}`;
    },
    async run(argv) {
      const { action, word, rest } = find(argv);
      if (word === undefined) throw usageError(`missing action after '${group}' (${names})`);
      if (!action) throw usageError(`unknown action '${word}' for '${group}' (${names})`);
      return action.run(rest);
    },
  };
}

/** `coffer <name> <action> ...` as a command: its help lists every action's usage. */
export function groupCommand(name: string, summary: string, actions: Action[]): Command {
  const group = actionGroup(`coffer ${name}`, actions);
  return {
    name,
    summary,
    usage: [`Usage: coffer ${name} <action> ... [--home DIR]`, '', actions.map((action) => '  ' + action.usage).join('\n\n')].join('\n'),
    helpFor: (argv) => group.helpFor(argv),
    run: (argv) => group.run(argv),
  };
}
