// A planted secret in tool arguments and in an upstream's env appears in no
// database row, log file or audit entry after a session.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startGateway, waitFor } from './helpers/gateway.js';
import { stdioFixture } from './fixtures/fixture-servers.js';

const ENV_SECRET = 'sk-env-planted-7f3a9c';
const ARG_SECRET = 'sk-arg-planted-1b2d4e';
const HEADER_SECRET = 'sk-header-planted-55aa';

t.test('no planted secret in the database, the logs or the audit', async (t) => {
  const gateway = await startGateway({ logLevel: 'debug' });
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('vault', [], {}, { API_KEY: ENV_SECRET }));
  t.equal((await gateway.api('POST', '/servers', { name: 'remote', enabled: false, transport: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: `Bearer ${HEADER_SECRET}` } } })).status, 201);
  const client = await gateway.client();
  const seen = await client.callTool({ name: 'vault__getenv', arguments: { name: 'API_KEY' } });
  t.match(JSON.stringify(seen), ENV_SECRET, 'the upstream really got the secret');
  await client.callTool({ name: 'vault__echo', arguments: { password: ARG_SECRET } });
  await client.callTool({ name: 'vault__nope', arguments: { password: ARG_SECRET } }).catch(() => undefined);
  t.equal((await gateway.api('PATCH', '/servers/vault', { description: 'changed', transport: { env: { API_KEY: `${ENV_SECRET}-2` } } })).status, 200);
  await gateway.api('POST', '/daemon/rotate-token');
  const audit = JSON.stringify((await gateway.api('GET', '/audit?limit=1000', undefined, readToken(gateway.home))).body);
  // Invocations are written in batches, off the call path.
  const invocations = await waitFor('the invocation batch', async () => {
    const text = JSON.stringify((await gateway.api('GET', '/invocations?limit=1000', undefined, readToken(gateway.home))).body);
    return text.includes('getenv') && text;
  });
  await gateway.daemon.stop();

  const files = ['coffer.db', 'coffer.db-wal', ...readdirSync(join(gateway.home, 'logs'), { recursive: true, encoding: 'utf8' }).map((file) => join('logs', file))];
  const haystacks: Record<string, string> = { audit, invocations };
  for (const file of files) {
    try {
      haystacks[file] = readFileSync(join(gateway.home, file)).toString('latin1');
    } catch {
      // coffer.db-wal is gone after a clean checkpoint.
    }
  }
  t.ok(Object.keys(haystacks).some((name) => name.startsWith('logs/')), 'log files were scanned');
  for (const [name, text] of Object.entries(haystacks)) {
    for (const secret of [ENV_SECRET, ARG_SECRET, HEADER_SECRET]) t.notOk(text.includes(secret), `${secret} not in ${name}`);
  }
});

function readToken(home: string): string {
  return (JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')) as { token: string }).token;
}
