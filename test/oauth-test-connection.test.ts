// `coffer mcp test` (R9's temporary connection, a piscina job) against an
// upstream behind the local authorization server
// (test/fixtures/oauth-servers.ts), with the real CLI: before a sign-in and
// after the token is revoked it fails with UPSTREAM_AUTH_REQUIRED and the
// command to run (exit 7), signed in (also after a daemon restart) it connects
// with the stored access token and lists the tools; no token in any output or log.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { EXIT } from '../src/cli/exit-codes.js';
import { runCli, type CliResult } from './helpers/cli.js';
import { startGateway, waitFor } from './helpers/gateway.js';
import { startOAuthGateway } from './helpers/oauth-gateway.js';

const NAME = 'remote';

t.test('coffer mcp test on a server that signs in with OAuth', async (t) => {
  const { fixture, rs, gateway, state } = await startOAuthGateway(t, NAME);
  const outputs: CliResult[] = [];
  const cli = async (...args: string[]): Promise<CliResult> => {
    const result = await runCli(gateway.home, ...args);
    outputs.push(result);
    return result;
  };

  await t.test('not signed in: UPSTREAM_AUTH_REQUIRED with the command to run', async (t) => {
    const human = await cli('mcp', 'test', NAME);
    t.equal(human.code, EXIT.UPSTREAM_TEST_FAILED, human.stderr);
    t.match(human.stderr, 'UPSTREAM_AUTH_REQUIRED');
    t.match(human.stderr, `upstream ${NAME} needs a sign-in: run 'coffer mcp auth ${NAME}'`);
    t.match(human.stdout, /ok:\s+no/);
    const json = await cli('mcp', 'test', NAME, '--json');
    t.equal(json.code, EXIT.UPSTREAM_TEST_FAILED);
    const report = JSON.parse(json.stdout);
    t.equal(report.ok, false);
    t.same(report.error, { code: 'UPSTREAM_AUTH_REQUIRED', message: `upstream ${NAME} needs a sign-in: run 'coffer mcp auth ${NAME}'` });
    t.equal(await state(), 'needs_auth', 'the live connection is untouched');
  });

  await t.test('signed in: the test connection carries the stored token and lists the tools', async (t) => {
    const started = await gateway.api('POST', `/servers/${NAME}/oauth`);
    t.equal(started.body.status, 'pending');
    // The person: the authorization server approves at once and sends the browser back to the daemon.
    const page = await fetch(started.body.url);
    t.equal(page.status, 200, await page.text());
    await waitFor(`${NAME} ready`, async () => (await state()) === 'ready', 20_000);

    const sent = rs.seen.length;
    const json = await cli('mcp', 'test', NAME, '--json');
    t.equal(json.code, EXIT.OK, json.stderr);
    const report = JSON.parse(json.stdout);
    t.equal(report.ok, true);
    t.same(report.server_info, { name: 'protected', version: '1.0.0' });
    t.equal(report.capabilities.tools, 2, 'whoami and write_thing');
    t.ok(rs.seen.length > sent && rs.seen.slice(sent).every((header) => header?.startsWith('Bearer at-')), 'every request of the test carried the access token');
    const human = await cli('mcp', 'test', NAME);
    t.equal(human.code, EXIT.OK, human.stderr);
    t.match(human.stdout, /tools 2/);
  });

  await t.test('the token revoked at the authorization server: UPSTREAM_AUTH_REQUIRED, and nothing refreshed by the test', async (t) => {
    fixture.provider.access.clear();
    const refreshes = fixture.provider.refreshes;
    const json = await cli('mcp', 'test', NAME, '--json');
    t.equal(json.code, EXIT.UPSTREAM_TEST_FAILED);
    t.same(JSON.parse(json.stdout).error, { code: 'UPSTREAM_AUTH_REQUIRED', message: `upstream ${NAME} refused the stored token (expired or revoked): run 'coffer mcp auth ${NAME}'` });
    t.equal(fixture.provider.refreshes, refreshes, "the refresh token stays the live connection's");
  });

  await t.test('after a restart: the tokens are still held and the test connection uses them', async (t) => {
    await gateway.daemon.stop();
    const again = await startGateway({}, gateway.home);
    try {
      // The access token was revoked above: the actor refreshes it on the 401 and stores the new one.
      await waitFor(`${NAME} ready again`, async () => (await again.api('GET', `/servers/${NAME}`)).body.health.state === 'ready', 20_000);
      t.match((await again.api('GET', `/servers/${NAME}/oauth`)).body, { status: 'signed_in', at: String }, 'signed in before this run');
      const json = await cli('mcp', 'test', NAME, '--json');
      t.equal(json.code, EXIT.OK, json.stdout);
      t.equal(JSON.parse(json.stdout).capabilities.tools, 2);
    } finally {
      await again.daemon.stop();
    }
  });

  t.test('no secret in the CLI output or the logs', async (t) => {
    const logs = readdirSync(join(gateway.home, 'logs'), { recursive: true, encoding: 'utf8' }).map((file) => join(gateway.home, 'logs', file));
    const haystack = [...outputs.map((output) => output.stdout + output.stderr), ...logs.filter((file) => file.endsWith('.log')).map((file) => readFileSync(file, 'utf8'))].join('\n');
    t.ok(fixture.provider.secrets.size > 0);
    for (const secret of fixture.provider.secrets) t.notOk(haystack.includes(secret), 'a secret of the fixture is nowhere');
  });
});
