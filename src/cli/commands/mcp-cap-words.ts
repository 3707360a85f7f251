// `coffer mcp cap set`: the user's own name and description for a tool or
// prompt (kept like a switch; the upstream's name is what calls are sent to).
import { expectPositionals } from '../args.js';
import { formatCapabilityRef, parseCapabilityRef } from '../cap-ref.js';
import { defineAction } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printJson, printLine, usageError } from '../output.js';
import { serverPath } from './mcp-shared.js';

interface WordsAnswer {
  preference: { own_name: string | null; own_description: string | null };
}

export const capSet = defineAction(
  'set',
  `set NAME tool:<name>|prompt:<name> [--name NEW] [--description TEXT] [--json]
      Your own words for a tool or prompt: clients see it as <namespace>__NEW
      with TEXT as its description (search too); calls still reach the
      upstream's name. '' goes back to the upstream's own. Kept across restarts
      and upgrades, like a switch. A name another tool of the server has:
      exit 5; a name model hosts refuse or too long for the name budget: exit 6.`,
  { name: { type: 'string' }, description: { type: 'string' }, json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [server, ref] = expectPositionals(positionals, ['NAME', 'REF']);
    const target = parseCapabilityRef(ref!);
    if (target.capability_type === 'resource') throw usageError('only tools and prompts have words of their own: a resource is named by its URI');
    if (values.name === undefined && values.description === undefined) throw usageError('give --name and/or --description (\'\' for the upstream\'s own)');
    const body = { key: target.capability_key, ...(values.name !== undefined ? { name: values.name } : {}), ...(values.description !== undefined ? { description: values.description } : {}) };
    const answer = await api().post<WordsAnswer>(`${serverPath(server!)}/capabilities/${target.capability_type}/words`, body);
    if (values.json) printJson(answer);
    else {
      const { own_name, own_description } = answer.preference;
      printLine(`${formatCapabilityRef(target)} on '${server}': name ${own_name ?? "the upstream's"}, description ${own_description === null ? "the upstream's" : 'your own'}`);
    }
    return EXIT.OK;
  },
);
