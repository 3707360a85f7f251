// The floor of spreading calls over isolates: the same small task (parse a
// tools/call, build and re-serialise its answer) run by W bare worker threads
// served in turn, a few tasks in flight, every worker equally warm first, in a
// process of its own so its CPU is theirs alone. What a task costs at W
// workers over what it costs at one is what rotating over isolates costs by
// itself — each task lands on a thread that must be woken, with its own code
// and heap out of the core's caches — whatever the task's own code.
// Prints one JSON line: {workers, tasks, userUsPerTask, sysUsPerTask} (usage: --help).
import { Worker } from 'node:worker_threads';
import { ACTOR_RESOURCE_LIMITS } from '../src/upstreams/actor.js';
import { parseOrExit, positiveInteger } from './cli-args.js';

const USAGE = 'usage: node dist/bench/rotation-floor.js --workers W [--warm PER_WORKER] [--tasks N] [--in-flight K]   (all positive integers)';
const OPTIONS = { workers: { type: 'string' }, warm: { type: 'string' }, tasks: { type: 'string' }, 'in-flight': { type: 'string' } } as const;
const values = parseOrExit(OPTIONS, USAGE, (given) => {
  if (given.workers === undefined) return '--workers is required';
  const bad = (Object.keys(OPTIONS) as (keyof typeof OPTIONS)[]).find((name) => positiveInteger(given[name]) === null);
  return bad === undefined ? null : `--${bad} must be a positive integer`;
});
const count = positiveInteger(values.workers)!;
const warmPerWorker = positiveInteger(values.warm) ?? 3_000;
const tasks = positiveInteger(values.tasks) ?? 20_000;
const inFlight = positiveInteger(values['in-flight']) ?? 4;

const TASK = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (message) => {
  const request = JSON.parse(message.body);
  const answer = { jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: request.params.arguments.text }], structuredContent: { echoed: request.params.arguments.text } } };
  parentPort.postMessage({ id: message.id, body: JSON.stringify(JSON.parse(JSON.stringify(answer))) });
});`;

const workers = Array.from({ length: count }, () => new Worker(TASK, { eval: true, resourceLimits: ACTOR_RESOURCE_LIMITS }));
let next = 0;

/** `total` tasks, worker after worker, `inFlight` at a time. */
function run(total: number): Promise<void> {
  return new Promise((resolve) => {
    let sent = 0;
    let done = 0;
    const send = (): void => {
      const id = next++;
      sent++;
      const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ping' } } });
      workers[id % count]!.postMessage({ id, body });
    };
    const answered = (): void => {
      done++;
      if (done === total) resolve();
      else if (sent < total) send();
    };
    for (const worker of workers) worker.removeAllListeners('message').on('message', answered);
    for (let k = 0; k < Math.min(inFlight, total); k++) send();
  });
}

await run(warmPerWorker * count);
const before = process.cpuUsage();
await run(tasks);
const used = process.cpuUsage(before);
process.stdout.write(`${JSON.stringify({ workers: count, tasks, userUsPerTask: used.user / tasks, sysUsPerTask: used.system / tasks })}\n`);
await Promise.all(workers.map((worker) => worker.terminate()));
