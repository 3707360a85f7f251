// Servers declared in a config file (coffer serve --config FILE): the published
// JSON Schema, refusals with line and column, a real daemon applying changes of
// the file as a diff, ownership, export and round trip, and no secret in clear.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigFileError, parseConfigText } from '../src/config-file/load.js';
import { CONFIG_SCHEMA_PATH, configFileJsonSchemaText } from '../src/config-file/schema.js';
import { PROJECT_ROOT } from '../src/paths.js';

function refusal(path: string, text: string, env: NodeJS.ProcessEnv = {}): ConfigFileError {
  try {
    parseConfigText(path, text, env);
  } catch (error) {
    if (error instanceof ConfigFileError) return error;
    throw error;
  }
  throw new Error('the file was accepted');
}

t.test('the committed JSON Schema is the one generated from the zod schema the API validates with', async (t) => {
  const committed = readFileSync(join(PROJECT_ROOT, CONFIG_SCHEMA_PATH), 'utf8');
  t.equal(committed, configFileJsonSchemaText(), `${CONFIG_SCHEMA_PATH} is stale: run npm run build && npm run schema`);
  const schema = JSON.parse(committed) as { required: string[]; properties: { servers: { items: { required: string[] } } } };
  t.same(schema.required, ['version']);
  t.same(schema.properties.servers.items.required, ['name', 'transport'], 'an entry is a POST /servers body');
});

t.test('a file is refused with the line and column of each problem, in both formats', async (t) => {
  const yaml = refusal(
    'coffer.yaml',
    ['version: 1', 'servers:', '  - name: a', '    bogus: 2', '    transport:', '      type: stdio', '      command: ${CMD}', '      env:', '        TOKEN: ${NOT_SET}', 'toolsets: []', ''].join('\n'),
  );
  t.equal(yaml.code, 'CONFIG_FILE_INVALID');
  t.same(
    yaml.errors.map((issue) => [issue.line, issue.column, issue.field]),
    [
      [4, 5, 'servers[0].bogus'],
      [7, 16, 'servers[0].transport.command'],
      [9, 16, 'servers[0].transport.env.TOKEN'],
      [10, 11, 'toolsets'],
    ],
  );
  t.match(yaml.message, /^config file coffer\.yaml refused: line 4, column 5: servers\[0\]\.bogus: is not a known field \(and 3 more\); nothing was changed$/);
  t.match(yaml.errors[2]!.message, '${NOT_SET} is not set');
  t.match(yaml.errors[3]!.message, 'not supported yet');

  const syntax = refusal('coffer.yaml', 'version: 1\nservers:\n  - name: [\n');
  t.same([syntax.errors[0]!.line, syntax.errors[0]!.column], [4, 1]);
  t.match(syntax.errors[0]!.message, /^not valid YAML: /);

  const json = refusal('coffer.json', '{\n  "version": 1,\n  "servers": [\n    {"name": "x" "transport": {}}\n  ]\n}\n');
  t.same([json.errors[0]!.line, json.errors[0]!.column], [4, 18]);
  t.equal(json.errors[0]!.message, 'not valid JSON: comma expected');

  const twice = refusal('coffer.json', '{"version": 1,\n "version": 1}');
  t.match(twice.errors[0], { line: 2, column: 2, message: /"version" is written twice/ });
});

t.test('${VAR} is read from the environment in env, headers and args only; $${ is a literal', async (t) => {
  const loaded = parseConfigText(
    'c.yaml',
    [
      'version: 1',
      'servers:',
      '  - name: a',
      '    transport: {type: stdio, command: node, args: ["--token=${TOKEN}", "plain"], env: {KEY: "${TOKEN}", LIT: "$${HOME}"}}',
      '  - name: b',
      '    transport: {type: http, url: "http://127.0.0.1:1/mcp", headers: {Authorization: "Bearer ${TOKEN}"}}',
    ].join('\n'),
    { TOKEN: 'tok-1' },
  );
  const [a, b] = loaded.servers;
  t.match(a!.transport, { args: ['--token=tok-1', 'plain'], env: { KEY: 'tok-1', LIT: '${HOME}' } });
  t.match(b!.transport, { headers: { Authorization: 'Bearer tok-1' } });
  t.same(loaded.declared.get('a'), { env: { KEY: '${TOKEN}', LIT: '$${HOME}' }, headers: {}, args: ['--token=${TOKEN}', null] });
  const url = refusal('c.yaml', 'version: 1\nservers:\n  - name: a\n    transport: {type: http, url: "http://h/?key=${KEY}"}\n', { KEY: 'k' });
  t.match(url.errors[0], { line: 4, field: 'servers[0].transport.url', message: /only read in transport env, headers and args/ });
});
