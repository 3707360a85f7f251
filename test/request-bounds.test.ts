// What a client names is bounded: a tool/prompt name past 1 KB or a URI past
// 8 KB is refused before routing (-32602, data.code NAME_TOO_LONG), so neither
// coffer.db nor a page of /invocations grows with it; and the writer stores
// any key clipped, whatever reaches it.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { MAX_NAME_CHARS, MAX_URI_CHARS } from '../src/mcp/param-limits.js';
import { MAX_ERROR_TEXT_CHARS } from '../src/protocol/untrusted-text.js';
import { stdioFixture } from './fixtures/fixture-servers.js';
import { startGateway, waitFor } from './helpers/gateway.js';
import { openWriter, tempInit } from './helpers/writer.js';

const FIVE_MB = 5 * 1024 * 1024;

function refusal(error: unknown): { code: number; dataCode: unknown } {
  if (!(error instanceof McpError)) throw error;
  return { code: error.code, dataCode: (error.data as { code?: unknown } | undefined)?.code };
}

t.test('ten calls with a 5 MB tool name are refused early; the database and /invocations stay small', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  await gateway.addServer(stdioFixture('fx', ['--resources', '--prompts']));
  const client = await gateway.client();

  const huge = `fx__${'\x1b[2J'.repeat(FIVE_MB / 4)}`;
  for (let i = 0; i < 10; i++) {
    const refused = await client.callTool({ name: huge }).then(() => null, refusal);
    t.same(refused, { code: -32602, dataCode: 'NAME_TOO_LONG' }, `call ${i + 1} refused`);
  }
  t.same(await client.getPrompt({ name: `fx__${'p'.repeat(MAX_NAME_CHARS)}` }).then(() => null, refusal), { code: -32602, dataCode: 'NAME_TOO_LONG' });
  t.same(await client.readResource({ uri: `coffer://fx/${'u'.repeat(MAX_URI_CHARS)}` }).then(() => null, refusal), { code: -32602, dataCode: 'NAME_TOO_LONG' });
  const completion = await client
    .complete({ ref: { type: 'ref/prompt', name: 'n'.repeat(MAX_NAME_CHARS + 1) }, argument: { name: 'a', value: '' } })
    .then(() => null, (error: unknown) => error);
  t.match(completion, { code: -32602, data: { code: 'NAME_TOO_LONG', field: 'params.ref.name', limit: MAX_NAME_CHARS } });

  // A name at the bound is not refused for its length: it is routed (and recorded) like any other.
  const atBound = `fx__${'e'.repeat(MAX_NAME_CHARS - 4)}`;
  const routed = await client.callTool({ name: atBound }).then(
    (result) => result,
    (error: unknown) => refusal(error),
  );
  t.not((routed as { dataCode?: unknown }).dataCode, 'NAME_TOO_LONG');
  const page = await waitFor('the routed call in /invocations', async () => {
    const answer = await gateway.api('GET', '/invocations?limit=50');
    return answer.body.invocations?.some((row: { key: string }) => row.key === atBound.slice(4)) && answer;
  });

  const pageBytes = JSON.stringify(page.body).length;
  t.ok(pageBytes < 64 * 1024, `GET /invocations?limit=50 answers ${pageBytes} bytes`);
  const dbBytes = ['coffer.db', 'coffer.db-wal'].reduce((sum, file) => {
    try {
      return sum + statSync(join(gateway.home, file)).size;
    } catch {
      return sum;
    }
  }, 0);
  t.ok(dbBytes < 8 * 1024 * 1024, `coffer.db (+ WAL) is ${dbBytes} bytes after ten 5 MB names`);
});

t.test('the writer stores an invocation key clipped, whatever reaches it', async (t) => {
  const { api } = await openWriter(t, tempInit(t, 'coffer-key-clip-'));
  const key = 'k'.repeat(1024 * 1024);
  await api.recordInvocations([{ at: new Date().toISOString(), server: 'up', kind: 'tool', key, duration_ms: 1, status: 'error', session: 's', error_code: -32602 }]);
  const [row] = await api.listInvocations({});
  t.ok(row!.key.length < MAX_ERROR_TEXT_CHARS + 40, `a 1 MB key is stored as ${row!.key.length} chars`);
  t.ok(row!.key.startsWith('kkkk'));
  t.match(row!.key, /… \[\d+ more chars\]$/);
});
