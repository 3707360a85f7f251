// `coffer mcp import FILE`: registers the servers of an MCP client's config file
// (parsing in ../import-config.ts) and reports, per server, what was done and why.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TransportConfig } from '../../protocol/server-config.js';
import { expectPositionals } from '../args.js';
import { defineAction } from '../command.js';
import { EXIT } from '../exit-codes.js';
import type { ImportEntry, ParsedClientConfig, SkipReason } from '../import-config.js';
import { CliError, printJson, printLine, printTable } from '../output.js';
import { describeTransport, type Server } from './mcp-shared.js';

interface ImportResult {
  name: string;
  status: 'added' | 'would_add' | 'skipped';
  reason?: SkipReason;
  message?: string;
  suggested_name?: string;
  errors?: Array<{ field: string; message: string }>;
  transport?: string;
  notes?: string[];
}

const FORMAT_LABEL = {
  mcpServers: 'mcpServers: Claude Desktop, Claude Code, Cursor',
  vscode: 'VS Code mcp.json',
  'vscode-settings': 'VS Code settings.json',
};

/** The parser (zod, jsonc, yaml) is loaded here, so the other `mcp` commands start without it. */
async function readConfigFile(file: string): Promise<ParsedClientConfig> {
  const { ImportFileError, parseClientConfig, projectDirOf } = await import('../import-config.js');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(EXIT.INVALID_INPUT, 'IMPORT_FILE_UNREADABLE', `cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return parseClientConfig(text, { projectDir: projectDirOf(resolve(file)) });
  } catch (error) {
    if (error instanceof ImportFileError) throw new CliError(EXIT.INVALID_INPUT, 'IMPORT_FILE_INVALID', `${file}: ${error.message}`);
    throw error;
  }
}

function skipped(entry: ImportEntry, skip: NonNullable<ImportEntry['skip']>): ImportResult {
  return { name: entry.name, status: 'skipped', ...skip, ...(entry.notes.length > 0 ? { notes: entry.notes } : {}) };
}

export const importAction = defineAction(
  'import',
  `import FILE [--dry-run] [--json]
      Register the servers of an MCP client's config file: Claude Desktop
      (claude_desktop_config.json), Claude Code (.mcp.json), Cursor (mcp.json),
      VS Code (.vscode/mcp.json, or "mcp.servers" of settings.json). Reports each
      server as added or skipped, with why: already exists, invalid name (with a
      valid one to use), unsupported (envFile, \${input:...} or other variables,
      which are never expanded, unknown fields or types), invalid config.
      Stdio servers of a project file (.mcp.json, .vscode/mcp.json) without a
      cwd run in its project directory, as in their client.
      --dry-run registers nothing. Exit 0 when every server was added or already
      exists, 6 when any was skipped for another reason or the file is unusable.`,
  { json: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
  async (positionals, values, { api }) => {
    const [file] = expectPositionals(positionals, ['FILE']);
    const { format, entries } = await readConfigFile(file!);
    const client = api();
    const existing = new Set((await client.get<{ servers: Server[] }>('/servers')).servers.map((server) => server.name));
    const results: ImportResult[] = [];
    for (const entry of entries) {
      if (entry.skip) {
        results.push(skipped(entry, entry.skip));
        continue;
      }
      const config = entry.config!;
      if (existing.has(entry.name)) {
        results.push(skipped(entry, { reason: 'already_exists', message: `a server named '${entry.name}' is already registered` }));
        continue;
      }
      const added: ImportResult = {
        name: entry.name,
        status: values['dry-run'] ? 'would_add' : 'added',
        transport: describeTransport(config.transport as unknown as TransportConfig),
        ...(entry.notes.length > 0 ? { notes: entry.notes } : {}),
      };
      if (!values['dry-run']) {
        try {
          await client.post<Server>('/servers', config);
        } catch (error) {
          if (!(error instanceof CliError)) throw error;
          if (error.code === 'RESOURCE_ALREADY_EXISTS') {
            results.push(skipped(entry, { reason: 'already_exists', message: error.message }));
            continue;
          }
          if (error.exitCode !== EXIT.INVALID_INPUT) throw error;
          const errors = (error.details as { errors?: ImportResult['errors'] } | undefined)?.errors;
          results.push(skipped(entry, { reason: 'invalid_config', message: error.message, ...(errors ? { errors } : {}) }));
          continue;
        }
      }
      existing.add(entry.name);
      results.push(added);
    }

    const count = (status: ImportResult['status']): number => results.filter((result) => result.status === status).length;
    const summary = { added: count('added'), would_add: count('would_add'), skipped: count('skipped') };
    if (values.json) printJson({ file, format, dry_run: Boolean(values['dry-run']), results, summary });
    else printReport(file!, FORMAT_LABEL[format], results, summary, Boolean(values['dry-run']));
    const failed = results.filter((result) => result.status === 'skipped' && result.reason !== 'already_exists');
    if (failed.length > 0) {
      throw new CliError(
        EXIT.INVALID_INPUT,
        'IMPORT_INCOMPLETE',
        `${failed.length} of ${results.length} servers could not be imported: ${failed.map((result) => result.name).join(', ')}`,
      );
    }
    return EXIT.OK;
  },
);

function printReport(file: string, format: string, results: ImportResult[], summary: { added: number; would_add: number; skipped: number }, dryRun: boolean): void {
  printLine(`${file} (${format}): ${results.length} server${results.length === 1 ? '' : 's'}`);
  if (results.length > 0) {
    const rows = results.map((result) => {
      const status = result.status === 'would_add' ? 'would add' : result.status;
      const why = result.status === 'skipped' ? `${result.reason!.replaceAll('_', ' ')}: ${result.message}` : result.transport!;
      return [status, result.name, why];
    });
    printTable(rows, '  ');
    for (const result of results) for (const note of result.notes ?? []) printLine(`  note: ${result.name}: ${note}`);
  }
  printLine(`${dryRun ? `${summary.would_add} would be added` : `${summary.added} added`}, ${summary.skipped} skipped${dryRun ? ' (dry run: nothing registered)' : ''}`);
}
