// Durability of the real daemon process: SIGKILL in the middle of a stream of
// preference toggles and server registrations over the REST API. After a
// restart every change the API acknowledged is there, the database passes
// PRAGMA integrity_check, and the killed daemon's stdio child did not outlive
// it. (The DB writer alone under SIGKILL, a dying writer worker and migration
// up/down levels are covered in db-writer.test.ts and writer-restart.test.ts.)
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { isProcessAlive } from '../src/daemon/daemon-file.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { faultSwitch, stdioFixture } from './fixtures/fixture-servers.js';
import { runCli, startCliDaemon, tempDir } from './helpers/cli.js';
import { waitFor } from './helpers/gateway.js';

/** The tools of the fixture; each gets its own toggle loop, so "the last acknowledged value" is well defined. */
const TOOLS = ['echo', 'whoami', 'getenv', 'slow', 'crash', 'mutate', 'stats'];
const REGISTRATION_LOOPS = 2;
/** Acknowledged changes before the kill: enough that some are surely still in the WAL. */
const ACKS_BEFORE_KILL = 100;

t.test('kill -9 during toggles and registrations: every acknowledged change survives, the DB is intact', async (t) => {
  const daemon = await startCliDaemon(t, 'coffer-durability-');
  const { api } = daemon;
  const live = faultSwitch(tempDir('coffer-durability-fixture-'));
  t.equal((await api('POST', '/servers', stdioFixture('live', live.args))).status, 201);
  // The tools must have been listed once (R4) before they can be switched.
  await waitFor('live tools known', async () => (await api('GET', '/servers/live/capabilities')).body?.tools?.items?.length === TOOLS.length);

  /** Per tool: the last acknowledged flag, and a flag whose request was still out at the kill. */
  const acked = new Map<string, boolean>();
  const inFlight = new Map<string, boolean>();
  const registered: string[] = [];
  const pendingNames = new Set<string>();
  let acks = 0;

  const toggleLoop = async (tool: string): Promise<void> => {
    // Until the daemon stops answering: a request it answered in its last moments must be kept too.
    for (let round = 0; ; round += 1) {
      const enabled = round % 2 === 1;
      inFlight.set(tool, enabled);
      const answer = await api('POST', `/servers/live/capabilities/tool/${enabled ? 'enable' : 'disable'}`, { key: tool }).catch(() => null);
      if (answer === null) return; // the daemon is gone
      t.equal(answer.status, 200, `toggle ${tool}`);
      acked.set(tool, enabled);
      inFlight.delete(tool);
      acks += 1;
    }
  };
  const registerLoop = async (loop: number): Promise<void> => {
    for (let round = 0; ; round += 1) {
      const name = `reg${loop}-${round}`;
      pendingNames.add(name);
      // Disabled: a registration is a database write, not a new child process.
      const answer = await api('POST', '/servers', { ...stdioFixture(name), enabled: false }).catch(() => null);
      if (answer === null) return;
      t.equal(answer.status, 201, `register ${name}`);
      registered.push(name);
      pendingNames.delete(name);
      acks += 1;
    }
  };
  const streams = [...TOOLS.map(toggleLoop), ...Array.from({ length: REGISTRATION_LOOPS }, (_unused, loop) => registerLoop(loop))];
  await waitFor(`${ACKS_BEFORE_KILL} acknowledged changes`, () => acks >= ACKS_BEFORE_KILL, 60_000);
  const livePid = live.pids().at(-1)!;
  process.kill(daemon.pid, 'SIGKILL');
  await Promise.all(streams);
  t.comment(`${acks} changes acknowledged before the kill (${registered.length} registrations); ${inFlight.size + pendingNames.size} were in flight`);
  await waitFor('the killed daemon to be gone', () => !isProcessAlive(daemon.pid), 5_000);
  // Its stdio child sees stdin close and exits by itself: no orphan even without a clean stop.
  await waitFor("the killed daemon's child to exit", () => !isProcessAlive(livePid), 10_000).catch(() => undefined);
  t.notOk(isProcessAlive(livePid), 'the stdio child did not outlive the daemon');

  const restarted = await runCli(daemon.home, 'daemon', 'start', '--json');
  t.equal(restarted.code, EXIT.OK, restarted.stderr);
  // daemon.api reads daemon.json at every call: from here on it speaks to the restarted daemon.
  const names = new Set<string>(((await api('GET', '/servers')).body.servers as Array<{ name: string }>).map((server) => server.name));
  t.same(registered.filter((name) => !names.has(name)), [], `all ${registered.length} acknowledged registrations are there`);
  const view = await waitFor('the capability view', async () => {
    const answer = await api('GET', '/servers/live/capabilities');
    return answer.status === 200 ? answer.body : null;
  });
  const flags = new Map<string, boolean>(view.tools.items.map((item: { key: string; enabled: boolean }) => [item.key, item.enabled]));
  for (const tool of TOOLS) {
    const allowed = [acked.get(tool) ?? true, ...(inFlight.has(tool) ? [inFlight.get(tool)!] : [])];
    t.ok(allowed.includes(flags.get(tool)!), `${tool}: ${flags.get(tool)} is the last acknowledged (or in-flight) value ${allowed.join(' / ')}`);
  }

  t.equal((await runCli(daemon.home, 'daemon', 'stop')).code, EXIT.OK);
  const db = new Database(join(daemon.home, 'coffer.db'), { readonly: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'PRAGMA integrity_check');
});
