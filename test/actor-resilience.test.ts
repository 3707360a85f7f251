// The upstream actor when upstreams misbehave: R7 eviction and retry, timeouts,
// hung and crashing upstreams, crash loops with backoff, and shutdown.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { callTool, grandchildOf, isAlive, startActor, toolJson } from './fixtures/actor-harness.js';
import { networkConfig, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';

// A wide crash window: on a loaded machine three fixture children can take seconds to start and exit.
const FAST_BACKOFF = { backoffInitialMs: 50, backoffMaxMs: 300, crashLoopLimit: 3, crashWindowMs: 60_000 };

t.test('R7: a list on a stale connection evicts it and heals on a fresh one', async (t) => {
  const first = await startNetworkFixture('http', ['--no-get-stream']);
  t.teardown(() => first.kill());
  const actor = startActor(t, networkConfig('restarting', 'http', first.url));
  await actor.waitForState('ready');
  t.match(await actor.handle.list('tools', false), { ok: true, state: 'live' });
  const pidBefore = toolJson(await callTool(actor, 'whoami')).pid;

  // The upstream restarts on the same port behind the actor's back: the old session is unknown there.
  await first.kill();
  const port = new URL(first.url).port;
  const second = await startNetworkFixture('http', ['--no-get-stream', '--port', port]);
  t.teardown(() => second.kill());
  const eventsBefore = actor.events.length;

  const healed = await actor.handle.list('tools', true);
  t.match(healed, { ok: true, state: 'live', cached: false }, 'the list succeeded after one retry');
  t.match(actor.log(), /evicting the connection/);
  t.ok(actor.events.slice(eventsBefore).some((e) => e.type === 'state' && e.status.state === 'connecting'), 'it reconnected');
  await actor.waitFor((e) => e.type === 'list_changed' && e.kind === 'tools', 2_000);
  const pidAfter = toolJson(await callTool(actor, 'whoami')).pid;
  t.not(pidAfter, pidBefore, 'talking to the new upstream process');
});

t.test('R7: a second failure is UPSTREAM_UNAVAILABLE, never an empty list', async (t) => {
  const actor = startActor(t, stdioFixture('always-failing', ['--fail-lists=-1']));
  await actor.waitForState('ready');
  const before = actor.events.length;
  const answer = await actor.handle.list('tools', false);
  t.match(answer, { ok: false, kind: 'tools', error: { code: 'UPSTREAM_UNAVAILABLE', message: /list failure as asked/, details: { server: 'always-failing' } } });
  t.same(
    actor.events.slice(before).flatMap((e) => (e.type === 'state' ? [e.status.state] : [])),
    ['connecting', 'ready'],
    'exactly one eviction and reconnect',
  );
  t.match(await actor.handle.list('prompts', false), { ok: true, state: 'unsupported' }, 'the fresh connection is usable');
});

t.test('a list timeout is UPSTREAM_TIMEOUT and is not retried', async (t) => {
  const actor = startActor(t, stdioFixture('hung', ['--hang'], { request_ms: 300 }));
  await actor.waitForState('ready');
  const before = actor.events.length;
  const started = Date.now();
  const answer = await actor.handle.list('tools', false);
  const took = Date.now() - started;
  t.match(answer, { ok: false, error: { code: 'UPSTREAM_TIMEOUT' } });
  t.ok(took >= 280 && took < 5_000, `answered after the request timeout (${took} ms)`);
  t.equal(actor.events.length, before, 'no reconnect');
  t.notMatch(actor.log(), /evicting/);
  t.match(actor.handle.lastStatus, { state: 'ready' }, 'a hung list does not take the connection down');
});

t.test('a stdio process that stops answering altogether (not even ping) is replaced after a timeout', async (t) => {
  const actor = startActor(t, stdioFixture('frozen', [], { request_ms: 300 }), FAST_BACKOFF);
  await actor.waitForState('ready');
  const frozen = actor.handle.lastStatus.pid!;
  process.kill(frozen, 'SIGSTOP');
  t.teardown(() => {
    if (isAlive(frozen)) process.kill(frozen, 'SIGKILL');
  });
  const before = actor.events.length;
  t.match(await actor.handle.list('tools', true), { ok: false, error: { code: 'UPSTREAM_TIMEOUT' } });
  await actor.waitForState('ready', before, 60_000);
  const replacement = actor.handle.lastStatus.pid;
  t.not(replacement, frozen, `a new process (${replacement}) replaced the frozen one (${frozen})`);
  t.match(await actor.handle.list('tools', true), { ok: true, state: 'live' }, 'and answers');
  t.match(actor.log(), /session lost: upstream unreachable/);
});

t.test('forward: a call cancelled while the connection is still opening is answered -32800 and never sent', async (t) => {
  const actor = startActor(t, stdioFixture('crashy', [], { request_ms: 5_000 }), FAST_BACKOFF);
  // Sent at once: the actor is still connecting (its child is starting), so the call waits for the connection.
  const pending = callTool(actor, 'slow', { ms: 3_000, steps: 2 }, { id: 'early' });
  actor.handle.cancel('early', 'changed my mind');
  t.match(await pending, { ok: false, error: { code: -32800 } });
  await actor.waitForState('ready');
  t.match(toolJson(await callTool(actor, 'whoami')), {}, 'the connection is fine afterwards');
  t.notMatch(actor.log(), /cancelled slow/, 'the cancelled call never reached the upstream, so neither did a cancel');
});

t.test('forward: timeout, cancel, upstream crash mid-call, then recovery', async (t) => {
  const actor = startActor(t, stdioFixture('crashy', [], { request_ms: 5_000 }), FAST_BACKOFF);
  await actor.waitForState('ready');

  const timedOut = await callTool(actor, 'slow', { ms: 2_000, steps: 2 }, { timeoutMs: 150 });
  t.match(timedOut, { ok: false, error: { code: -32001, data: { code: 'UPSTREAM_TIMEOUT', server: 'crashy' } } });

  const pending = callTool(actor, 'slow', { ms: 3_000, steps: 30 }, { id: 'to-cancel' });
  await new Promise((resolve) => setTimeout(resolve, 150));
  const cancelledAt = Date.now();
  actor.handle.cancel('to-cancel', 'user gave up');
  t.match(await pending, { ok: false, error: { code: -32800 } });
  t.ok(Date.now() - cancelledAt < 500, 'cancel answers at once');
  await actor.waitFor(() => /cancelled slow/.test(actor.log()), 2_000).catch(() => {});
  t.match(actor.log(), /cancelled slow/, 'the upstream got notifications/cancelled');

  const pidBefore = actor.handle.lastStatus.pid!;
  const crashStarted = Date.now();
  const crashed = await callTool(actor, 'crash');
  t.match(crashed, { ok: false, error: { code: -32010, data: { code: 'UPSTREAM_UNAVAILABLE', server: 'crashy' } } });
  t.ok(Date.now() - crashStarted < 2_000, 'the in-flight call failed promptly');
  await actor.waitForState('ready', actor.events.length);
  const after = toolJson(await callTool(actor, 'whoami'));
  t.not(after.pid, pidBefore, 'the next call succeeds on a new child');
  t.notOk(isAlive(pidBefore));
  // Its stdout ended as it exited ('end' comes before 'exit'): that is a crash, not a child gone deaf while it runs.
  t.notMatch(actor.log(), /stdout ended while it runs/, 'the crash is not reported as a deaf child');
});

t.test('HTTP upstream dying mid-call fails the call promptly', async (t) => {
  const fixture = await startNetworkFixture('http');
  t.teardown(() => fixture.kill());
  const actor = startActor(t, networkConfig('http-crashy', 'http', fixture.url, { request_ms: 20_000 }), FAST_BACKOFF);
  await actor.waitForState('ready');
  const started = Date.now();
  const crashed = await callTool(actor, 'crash');
  t.match(crashed, { ok: false, error: { code: -32010, data: { code: 'UPSTREAM_UNAVAILABLE' } } });
  t.ok(Date.now() - started < 3_000, `failed after ${Date.now() - started} ms`);
  await actor.waitFor((e) => e.type === 'state' && e.status.state !== 'ready', 10_000);
});

t.test('exit at start: backoff, crash-loop cap, bounded retries, immediate errors', async (t) => {
  const actor = startActor(t, stdioFixture('doomed', ['--exit-at-start']), FAST_BACKOFF);
  // Three fixture children start and exit: seconds each on a loaded machine.
  const failed = await actor.waitForState('failed', 0, 60_000);
  t.match(failed, { status: { state: 'failed', attempts: 3, lastError: /connect failed/ } });
  t.same(actor.states().slice(0, 6), ['connecting', 'backoff', 'connecting', 'backoff', 'connecting', 'failed']);
  t.match(actor.log(), /fixture: exiting at start/, "the child's stderr is in the log file");

  const started = Date.now();
  t.match(await actor.handle.list('tools', false), { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE', message: /failed/ } });
  t.match(await callTool(actor, 'echo'), { ok: false, error: { code: -32010 } });
  // Waiting would take a backoff step or a connect; a loaded machine can delay the answer by far less.
  t.ok(Date.now() - started < 1_000, `no waiting while the upstream is down (${Date.now() - started} ms)`);

  // In `failed`, retries continue at backoffMaxMs, no faster.
  const attemptsBefore = actor.states().filter((s) => s === 'connecting').length;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const attempts = actor.states().filter((s) => s === 'connecting').length - attemptsBefore;
  t.ok(attempts <= 4, `at most one retry per backoffMaxMs (${attempts} in 1 s)`);
});

t.test('garbage on stdout: connect times out into backoff', async (t) => {
  const actor = startActor(t, stdioFixture('garbled', ['--garbage'], { connect_ms: 1_500 }), FAST_BACKOFF);
  const backoff = await actor.waitForState('backoff', 0, 30_000);
  t.match(backoff, { status: { lastError: /connect failed/ } });
});

t.test('shutdown stops the stdio child, even a connecting one', async (t) => {
  const actor = startActor(t, stdioFixture('short-lived'));
  const ready = await actor.waitForState('ready');
  const pid = ready.type === 'state' ? ready.status.pid! : 0;
  t.ok(isAlive(pid));
  await actor.handle.stop();
  t.notOk(isAlive(pid), 'no orphaned child');
  t.equal(actor.states().at(-1), 'stopped');
  t.match(await actor.handle.list('tools', false), { ok: false, error: { code: 'UPSTREAM_UNAVAILABLE' } }, 'a stopped actor answers, never hangs');
  t.same(actor.exits, [], 'a requested stop is not reported as a death');

  const hanging = startActor(t, stdioFixture('never-ready', ['--garbage'], { connect_ms: 20_000 }));
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const stoppedAt = Date.now();
  await hanging.handle.stop();
  t.ok(Date.now() - stoppedAt < 6_000, 'stop does not wait out connect_ms');
  t.equal(hanging.states().at(-1), 'stopped');
});

t.test('stop ends what the stdio child forked too: a grandchild that ignores SIGTERM and stdin EOF is not left running', async (t) => {
  const pids = join(mkdtempSync(join(tmpdir(), 'coffer-grandchild-')), 'pids');
  const actor = startActor(t, stdioFixture('forking', ['--grandchild', pids]));
  const ready = await actor.waitForState('ready');
  const pid = ready.type === 'state' ? ready.status.pid! : 0;
  const grandchild = grandchildOf(t, pids);
  t.ok(isAlive(grandchild), 'the grandchild runs');
  await actor.handle.stop();
  t.notOk(isAlive(pid), 'the child is gone');
  t.notOk(isAlive(grandchild), 'the grandchild is gone');
});

t.test('a stdio child that crashes while a grandchild keeps its stdout open: the call in flight fails promptly, a new child follows', async (t) => {
  const pids = join(mkdtempSync(join(tmpdir(), 'coffer-grandchild-')), 'pids');
  const actor = startActor(t, stdioFixture('crashy-parent', ['--grandchild', pids, '--grandchild-keeps-stdout'], { request_ms: 20_000 }), FAST_BACKOFF);
  await actor.waitForState('ready');
  const grandchild = grandchildOf(t, pids);
  const pidBefore = actor.handle.lastStatus.pid!;
  const crashStarted = Date.now();
  const crashed = await callTool(actor, 'crash');
  t.match(crashed, { ok: false, error: { code: -32010, data: { code: 'UPSTREAM_UNAVAILABLE', server: 'crashy-parent' } } });
  t.ok(Date.now() - crashStarted < 5_000, `the in-flight call failed promptly (${Date.now() - crashStarted} ms)`);
  await actor.waitForState('ready', actor.events.length);
  t.not(toolJson(await callTool(actor, 'whoami')).pid, pidBefore, 'a new child answers');
  t.notOk(isAlive(grandchild), 'the crashed child\'s grandchild is gone');
});

t.test('a stdio child that closes its stdout and runs on: the call in flight fails promptly, the child is stopped, a new one follows', async (t) => {
  const actor = startActor(t, stdioFixture('mute', [], { request_ms: 20_000 }), FAST_BACKOFF);
  await actor.waitForState('ready');
  const pidBefore = actor.handle.lastStatus.pid!;
  t.teardown(() => {
    if (isAlive(pidBefore)) process.kill(pidBefore, 'SIGKILL');
  });
  const started = Date.now();
  const muted = await callTool(actor, 'crash', { closeStdout: true });
  t.match(muted, { ok: false, error: { code: -32010, data: { code: 'UPSTREAM_UNAVAILABLE', server: 'mute' } } });
  t.ok(Date.now() - started < 6_000, `the in-flight call failed promptly (${Date.now() - started} ms), not at its 20 s deadline`);
  await actor.waitForState('ready', actor.events.length);
  t.not(toolJson(await callTool(actor, 'whoami')).pid, pidBefore, 'a new child answers');
  t.notOk(isAlive(pidBefore), 'the mute child is gone');
  t.match(actor.log(), /stdout ended/);
});
