// `coffer retention list|set|prune`: how long the audit and invocation logs are
// kept (days, or forever), and a prune on demand (the daemon also prunes by itself).
import { expectPositionals, parsePositiveInt } from '../args.js';
import { groupCommand, defineAction, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine, printTable, usageError } from '../output.js';

/** GET /retention: one policy; days null = kept forever. */
export interface RetentionPolicy {
  table: string;
  days: number | null;
}

const describeKeep = (days: number | null): string => (days === null ? 'forever' : `${days} day${days === 1 ? '' : 's'}`);

const retentionPath = (table: string): string => `/retention/${encodeURIComponent(table)}`;

const list = defineAction(
  'list',
  `list [--json]
      Each log (audit, invocations) and how long its rows are kept.`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const { policies } = await api().get<{ policies: RetentionPolicy[] }>('/retention');
    if (values.json) printJson({ policies });
    else printTable([['TABLE', 'KEEP'], ...policies.map((policy) => [policy.table, describeKeep(policy.days)])]);
    return EXIT.OK;
  },
);

const set = defineAction(
  'set',
  `set TABLE (--days N | --forever) [--json]
      Keep TABLE's rows (audit or invocations) N days, or forever; older rows
      go at the next prune. Audited. Exit 4 for an unknown table, 6 for a
      number of days the daemon refuses.`,
  { days: { type: 'string' }, forever: { type: 'boolean' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [table] = expectPositionals(positionals, ['TABLE']);
    if ((values.days === undefined) === !values.forever) throw usageError('give exactly one of --days N or --forever');
    const days = values.forever ? null : parsePositiveInt(values.days, '--days')!;
    const policy = await api().patch<RetentionPolicy>(retentionPath(table!), { days });
    if (values.json) printJson({ policy });
    else printLine(`retention of '${policy.table}': ${describeKeep(policy.days)}`);
    return EXIT.OK;
  },
);

const prune = defineAction(
  'prune',
  `prune [--json]
      Delete the rows older than each policy now; prints how many went.`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const { pruned } = await api().post<{ pruned: Record<string, number> }>('/retention/prune');
    if (values.json) printJson({ pruned });
    else {
      const counts = Object.entries(pruned).map(([table, count]) => `${table} ${count}`);
      printLine(`pruned: ${counts.join(', ') || 'nothing'}`);
    }
    return EXIT.OK;
  },
);

export const retentionCommand: Command = groupCommand('retention', 'how long the audit and invocation logs are kept: list, set, prune', [list, set, prune]);
