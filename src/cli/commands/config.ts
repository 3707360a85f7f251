// `coffer config export|status`: the running registry written as a config file
// (secrets as ${VAR} references), and the state of the file the daemon watches.
import { stringify } from 'yaml';
import type { ExportedConfig } from '../../config-file/export.js';
import { describeIssue } from '../../config-file/load.js';
import type { ConfigFileStatus } from '../../config-file/sync.js';
import { expectPositionals } from '../args.js';
import { defineAction, groupCommand, type Command } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { printFields, printJson, printLine, printMessage, usageError } from '../output.js';

const SCHEMA_NOTE = '# coffer config file: coffer serve --config FILE (JSON Schema: schema/coffer-config.schema.json)';

const exportAction = defineAction(
  'export',
  `export [--format yaml|json]
      Writes the running servers as a config file on stdout (YAML by default).
      Secret values (env, headers, secret-looking arguments) are written as \${VAR}
      references, never in clear; the variables to set are listed on stderr.`,
  { format: { type: 'string' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const format = values.format ?? 'yaml';
    if (format !== 'yaml' && format !== 'json') throw usageError(`--format must be yaml or json, not '${format}'`);
    const { document, variables } = await api().get<ExportedConfig>('/config/export');
    if (format === 'json') printJson(document);
    else printLine(`${SCHEMA_NOTE}\n${stringify(document, { lineWidth: 0 })}`.trimEnd());
    if (variables.length > 0) printMessage(`coffer: the file reads these environment variables: ${variables.join(', ')}`);
    return EXIT.OK;
  },
);

const statusAction = defineAction(
  'status',
  `status [--json]
      The config file the daemon watches (--config), the servers it declares,
      and how its last change went (applied, or refused with line and column).`,
  { json: { type: 'boolean' } },
  async (positionals, values, { api }) => {
    expectPositionals(positionals, []);
    const { file } = await api().get<{ file: ConfigFileStatus | null }>('/config');
    if (values.json) printJson({ file });
    else if (file === null) printLine('no config file: the daemon was started without --config; servers are managed through the API');
    else {
      printFields([
        ['file', file.path],
        ['servers', file.servers.join(', ') || '(none)'],
        ['last change', `${file.last.status} at ${file.last.at}`],
      ]);
      for (const issue of file.last.errors) printLine(`  ${describeIssue(issue)}`);
      if (file.last.message && file.last.errors.length === 0 && file.last.status !== 'applied') printLine(`  ${file.last.message}`);
    }
    return EXIT.OK;
  },
);

export const configCommand: Command = groupCommand('config', 'servers declared in a file: export the running ones, show the watched file', [exportAction, statusAction]);
