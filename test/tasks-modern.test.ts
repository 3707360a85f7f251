// The tasks extension (io.modelcontextprotocol/tasks) through coffer: a
// 2026-07-28 caller that declares it gets an upstream's tasks under coffer's
// own task ids and polls, answers and cancels them through coffer; an id that
// coffer did not give that caller reaches no upstream; a task whose server or
// tool is gone or switched off answers with a stable code at once; a caller
// without the extension (of either era) gets the synchronous path. Real
// pieces: the modern-only tasks fixture over stdio, a daemon, raw modern POSTs
// and the v1 SDK client.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { gatewayWith, waitFor, type Gateway } from './helpers/gateway.js';
import { CAPABILITIES_KEY, modernPost } from './helpers/modern.js';
import { sleep } from './helpers/wait.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'tasks-upstream.js');
const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} }, elicitation: {} };
const server = (name: string) => ({ name, transport: { type: 'stdio', command: process.execPath, args: [FIXTURE], env: {}, cwd: null } });

/** The tasks fixture's processes (children of this process: the actors are its worker threads). */
function fixturePids(): number[] {
  const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n');
  return lines.filter((line) => line.includes('tasks-upstream')).map((line) => Number.parseInt(line.trim(), 10));
}

let ids = 0;
/** One modern request's answer (result or error); `capabilities` are the request's own, `authorization` replaces the daemon's token. */
async function rpc(gateway: Gateway, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = WITH_TASKS, authorization?: string): Promise<any> {
  const answer = await modernPost(gateway, method, { ...params, _meta: { [CAPABILITIES_KEY]: capabilities } }, authorization ? { authorization } : {}, ++ids, 10_000);
  return answer.messages.at(-1);
}

async function settled(gateway: Gateway, taskId: string): Promise<any> {
  for (let polls = 0; polls < 100; polls++) {
    const { result } = await rpc(gateway, 'tasks/get', { taskId });
    if (['completed', 'failed', 'cancelled'].includes(result.status)) return result;
    await sleep(50);
  }
  throw new Error(`task ${taskId} did not settle`);
}

t.test('a task round trip: created upstream, polled, answered and cancelled through coffer under coffer’s ids', async (t) => {
  const gateway = await gatewayWith(t, [server('a')]);
  const discovered = await rpc(gateway, 'server/discover', {});
  t.same(discovered.result.capabilities.extensions, { [TASKS]: {} }, 'discover advertises the extension while an upstream serves it');

  const created = (await rpc(gateway, 'tools/call', { name: 'a__slow_compute', arguments: { seconds: 1, label: 'rt' } })).result;
  t.match(created, { resultType: 'task', status: 'working', ttlMs: 60_000, pollIntervalMs: 200 }, 'a flat CreateTaskResult');
  t.notMatch(created.taskId, /^[0-9a-f-]{36}$/, "the upstream's own id is not shown as it is");
  t.notOk('requestState' in created, 'no requestState on a task');
  const working = (await rpc(gateway, 'tasks/get', { taskId: created.taskId })).result;
  t.match(working, { resultType: 'complete', taskId: created.taskId, status: 'working' }, 'tasks/get at once names coffer’s id');
  const done = await settled(gateway, created.taskId);
  t.match(done, { status: 'completed', taskId: created.taskId, result: { content: [{ type: 'text', text: 'computed rt in 1000 ms' }] } }, 'the result inlined');

  const asking = (await rpc(gateway, 'tools/call', { name: 'a__confirm_delete', arguments: { filename: 'x.txt' } })).result;
  const parked = (await rpc(gateway, 'tasks/get', { taskId: asking.taskId })).result;
  t.match(parked, { status: 'input_required', inputRequests: { confirm: { method: 'elicitation/create' } } }, 'the task’s questions');
  t.same((await rpc(gateway, 'tasks/update', { taskId: asking.taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: 'yes' } } } })).result.resultType, 'complete', 'tasks/update acked');
  t.match(await settled(gateway, asking.taskId), { status: 'completed', result: { content: [{ text: 'deleted x.txt' }] } }, 'the answer reached the upstream’s task');

  const long = (await rpc(gateway, 'tools/call', { name: 'a__slow_compute', arguments: { seconds: 60 } })).result;
  const ack = (await rpc(gateway, 'tasks/cancel', { taskId: long.taskId })).result;
  t.notOk('taskId' in ack || 'status' in ack, 'the cancel ack carries no task');
  t.equal((await settled(gateway, long.taskId)).status, 'cancelled', 'the upstream’s task was cancelled');
});

t.test('an id coffer did not give this caller reaches no upstream: -32602 TASK_NOT_FOUND', async (t) => {
  const gateway = await gatewayWith(t, [server('a')]);
  const { taskId } = (await rpc(gateway, 'tools/call', { name: 'a__slow_compute', arguments: { seconds: 60 } })).result;
  const notFound = { code: -32602, data: { code: 'TASK_NOT_FOUND' } };
  const flipped = `${taskId.slice(0, -2)}${taskId.at(-2) === 'A' ? 'B' : 'A'}${taskId.slice(-1)}`;
  t.match((await rpc(gateway, 'tasks/get', { taskId: flipped })).error, notFound, 'a changed id');
  t.match((await rpc(gateway, 'tasks/get', { taskId: 'b3c1e0de-0000-4000-8000-000000000000' })).error, notFound, 'a bare id, as an upstream would name its task');
  const [body, , mac] = taskId.split('.');
  const forged = `${body}.${Buffer.from(JSON.stringify({ h: { kind: 'task', server: 'a', tool: 'slow_compute', task: 'other' } })).toString('base64url')}.${mac}`;
  t.match((await rpc(gateway, 'tasks/cancel', { taskId: forged })).error, notFound, 'a forged payload under a real MAC');
  const other = await gateway.api('POST', '/clients', { name: 'other' });
  t.match((await rpc(gateway, 'tasks/get', { taskId }, WITH_TASKS, `Bearer ${other.body.token}`)).error, notFound, "another credential's task");
  t.equal((await rpc(gateway, 'tasks/get', { taskId })).result.status, 'working', 'the owner still reaches it');
  const notText = (await rpc(gateway, 'tasks/get', { taskId: { id: taskId } })).error;
  t.match(notText, { code: -32602, data: { code: 'BAD_REQUEST' }, message: /tasks\/get needs params\.taskId, a string/ }, 'a taskId that is not a string is refused as such');
  t.notMatch(notText.message, /object Object/, 'what was sent is not echoed as [object Object]');
  const long = (await rpc(gateway, 'tasks/get', { taskId: 'x'.repeat(2_000) })).error;
  t.match(long, notFound, 'a long unknown taskId is unknown');
  t.ok(long.message.length < 500, `a long unknown taskId is not echoed whole (${long.message.length} characters)`);
  await rpc(gateway, 'tasks/cancel', { taskId });
});

t.test('a task whose tool, server or upstream is gone answers at once with a stable code', async (t) => {
  const gateway = await gatewayWith(t, [server('a')]);
  const start = async () => (await rpc(gateway, 'tools/call', { name: 'a__slow_compute', arguments: { seconds: 60 } })).result.taskId as string;
  const taskId = await start();
  t.equal((await gateway.api('POST', '/servers/a/capabilities/tool/disable', { key: 'slow_compute' })).status, 200);
  t.match((await rpc(gateway, 'tasks/get', { taskId })).error, { code: -32000, data: { code: 'TOOL_DISABLED' } }, 'its tool switched off (R10)');
  t.equal((await gateway.api('POST', '/servers/a/capabilities/tool/enable', { key: 'slow_compute' })).status, 200);
  t.equal((await gateway.api('POST', '/servers/a/disable')).status, 200);
  t.match((await rpc(gateway, 'tasks/get', { taskId })).error, { code: -32000, data: { code: 'TOOL_DISABLED', server: 'a' } }, 'its server switched off');
  t.notOk((await rpc(gateway, 'server/discover', {})).result.capabilities.extensions, 'no upstream serves tasks: not advertised');
  t.equal((await gateway.api('DELETE', '/servers/a')).status, 204);
  const started = Date.now();
  t.match((await rpc(gateway, 'tasks/get', { taskId })).error, { code: -32602, data: { code: 'TASK_NOT_FOUND', server: 'a' } }, 'its server removed');
  t.ok(Date.now() - started < 2_000, 'no wait');
});

t.test('a task whose upstream process dies answers an error at once, then the restarted upstream’s own unknown-task error', async (t) => {
  const gateway = await gatewayWith(t, [server('a')]);
  const { taskId } = (await rpc(gateway, 'tools/call', { name: 'a__slow_compute', arguments: { seconds: 60 } })).result;
  const pid = fixturePids()[0]!;
  process.kill(pid, 'SIGKILL');
  const started = Date.now();
  const answer = await rpc(gateway, 'tasks/get', { taskId });
  t.ok(Date.now() - started < 5_000, 'no hang');
  t.ok(answer.error, `an error: ${JSON.stringify(answer.error)}`);
  await waitFor('a new upstream process', async () => fixturePids().some((other) => other !== pid) && (await gateway.api('GET', '/servers/a')).body.health.state === 'ready', 60_000);
  t.match((await rpc(gateway, 'tasks/get', { taskId })).error, { code: -32602 }, 'the new process does not know the task: the extension’s unknown-task error');
});

t.test('a caller without the extension gets the synchronous path, in both eras', async (t) => {
  const gateway = await gatewayWith(t, [server('a')]);
  const sync = (await rpc(gateway, 'tools/call', { name: 'a__slow_compute', arguments: { seconds: 0 } }, {})).result;
  t.match(sync, { resultType: 'complete', content: [{ text: 'computed  in 0 ms' }] }, 'a task-optional tool runs synchronously');
  t.notOk('taskId' in sync);
  t.match((await rpc(gateway, 'tools/call', { name: 'a__failing_job', arguments: {} }, {})).error, { code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } }, 'a task-required tool: the upstream’s -32021');
  t.match((await rpc(gateway, 'tasks/get', { taskId: 'x' }, {})).error, { code: -32021, data: { code: 'MISSING_CLIENT_CAPABILITY' } }, 'tasks/get needs the extension');

  // The 2025 era has no tasks extension: even a client that declares it at initialize is answered synchronously.
  const legacy = await gateway.client('legacy', { extensions: { [TASKS]: {} } } as Record<string, unknown>);
  const result = await legacy.callTool({ name: 'a__slow_compute', arguments: { seconds: 0, label: 'old' } });
  t.match(result, { content: [{ text: 'computed old in 0 ms' }] }, 'a legacy client gets the result itself');
  await t.rejects(legacy.request({ method: 'tasks/get', params: { taskId: 'x' } } as never, {} as never), { code: -32601 }, 'and no tasks methods');
});
