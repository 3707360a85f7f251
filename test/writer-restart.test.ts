// The DB writer worker dying is detected and it is replaced; calls made while
// it is down wait for the replacement, and nothing acknowledged is lost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import t from 'tap';
import { openRestartingWriter } from '../src/db/restarting-writer.js';
import { spawnDbWriter, superviseDbWriter } from '../src/db/writer-handle.js';
import { MIGRATIONS_DIR } from '../src/paths.js';
import type { DbInit } from '../src/protocol/db.js';
import { stdioFixture } from './fixtures/fixture-servers.js';

t.test('a killed writer is replaced and calls go on', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'coffer-writer-restart-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const init: DbInit = { dbPath: join(dir, 'coffer.db'), migrationsDir: MIGRATIONS_DIR, keyPath: join(dir, 'secret.key') };
  const workers: Worker[] = [];
  let deaths = 0;
  let restarts = 0;
  const opened = await openRestartingWriter(
    init,
    { restartDelayMs: 50, onDeath: () => void deaths++, onRestart: () => void restarts++ },
    (writerInit, options) => {
      const { worker, events } = spawnDbWriter(writerInit);
      workers.push(worker);
      return superviseDbWriter(worker, options, events);
    },
  );
  if (!opened.ok) throw new Error(opened.error.message);
  const writer = opened.value;
  t.teardown(() => writer.close());

  t.ok((await writer.api.createServer(stdioFixture('before'), 'api')).ok);
  await workers[0]!.terminate();
  // Issued while the writer is down: waits for the replacement instead of failing or vanishing.
  const during = await writer.api.createServer(stdioFixture('during'), 'api');
  t.ok(during.ok, 'a write issued during the restart lands');
  t.equal(deaths, 1, 'the death was reported');
  t.equal(restarts, 1, 'and a replacement started');
  t.same((await writer.api.listServers()).map((record) => record.config.name).sort(), ['before', 'during'], 'nothing acknowledged was lost');
});
