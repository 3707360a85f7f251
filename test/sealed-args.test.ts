// A secret in a stdio upstream's arguments: the upstream gets it, the database file
// never holds it in clear (rows written before are sealed at start), API answers
// mask it, the audit hides every argument, and the add answer (and CLI) warns.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { REDACTED } from '../src/registry/server-config.js';
import { FIXTURE, stdioFixture } from './fixtures/fixture-servers.js';
import { fixtureLine, runCli } from './helpers/cli.js';
import { startGateway, tempHome } from './helpers/gateway.js';
import { waitReady } from './helpers/rest.js';

const SECRET = 'ghp_plantedArgSecret0123456789abcdef';

const dbText = (home: string): string =>
  ['coffer.db', 'coffer.db-wal']
    .map((file) => {
      try {
        return readFileSync(join(home, file)).toString('latin1');
      } catch {
        return ''; // no WAL after a clean stop
      }
    })
    .join('');

async function whoami(gateway: Awaited<ReturnType<typeof startGateway>>): Promise<string> {
  const client = await gateway.client();
  const answer = (await client.callTool({ name: 'vault__whoami', arguments: {} })) as { content: { text: string }[] };
  return (JSON.parse(answer.content[0]!.text) as { name: string }).name;
}

t.test('a secret argument is sealed at rest, masked in answers, hidden in the audit', async (t) => {
  const home = tempHome();
  const gateway = await startGateway({}, home);
  const added = await gateway.api('POST', '/servers', stdioFixture('vault', ['--name', SECRET]));
  t.equal(added.status, 201);
  t.same(added.body.transport.args, [FIXTURE, '--name', 'vault', '--name', REDACTED], 'the answer masks it');
  t.match(added.body.warnings, [/1 argument\(s\) of the command look like secrets/], 'and warns');
  await waitReady(gateway.api, 'vault');
  t.equal(await whoami(gateway), SECRET, 'the upstream got the argument');
  t.notMatch(JSON.stringify((await gateway.api('GET', '/servers')).body), SECRET, 'GET /servers masks it');
  const audit = JSON.stringify((await gateway.api('GET', '/audit?limit=100')).body);
  t.match(audit, 'server_added');
  t.notMatch(audit, FIXTURE, 'the audit holds no argument at all');

  const cli = await runCli(home, 'mcp', 'add', 'cli-vault', '--stdio', `${fixtureLine()} --api-key=${SECRET}`);
  t.equal(cli.code, EXIT.OK, cli.stderr);
  t.match(cli.stderr, 'warning: 1 argument(s) of the command look like secrets', 'the CLI warns');

  t.notMatch(dbText(home), SECRET, 'not in the database while running');
  await gateway.daemon.stop();
  t.notMatch(dbText(home), SECRET, 'not in the database after the stop');

  // As a coffer from before sealed arguments left the row.
  const db = new Database(join(home, 'coffer.db'));
  const row = db.prepare<[], { config: string }>("SELECT config FROM mcp_servers WHERE name = 'vault'").get()!;
  const legacy = JSON.parse(row.config) as { transport: { args: unknown } };
  legacy.transport.args = [FIXTURE, '--name', SECRET];
  db.prepare('UPDATE mcp_servers SET config = ? WHERE name = ?').run(JSON.stringify(legacy), 'vault');
  db.close();
  t.match(dbText(home), SECRET, 'planted in clear');

  const again = await startGateway({}, home);
  t.teardown(() => again.close());
  await waitReady(again.api, 'vault');
  t.equal(await whoami(again), SECRET, 'the old row still runs the same command');
  await again.daemon.stop();
  t.notMatch(dbText(home), SECRET, 'sealed at start, no clear copy left in the file');
});
