// The floor of an actor's footprint: N bare worker threads that run nothing
// but a keep-alive, started as the pool starts actors (a bounded number at a
// time), in a process of their own so its RSS and CPU are theirs alone.
// Prints one JSON line: {workers, rssPerWorkerMb, rssSettledPerWorkerMb, cpuPerWorkerMs, allOnlineMs}
// (settled: the process and its workers idle for --settle-ms before and after).
//
//   node dist/bench/worker-floor.js --workers N --concurrency C [--settle-ms MS] [--limits JSON]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Worker, type ResourceLimits } from 'node:worker_threads';

const { values } = parseArgs({ options: { workers: { type: 'string' }, concurrency: { type: 'string' }, 'settle-ms': { type: 'string' }, limits: { type: 'string' } } });
const count = Number(values.workers);
const concurrency = Number(values.concurrency);
const settleMs = Number(values['settle-ms'] ?? 0);
const resourceLimits = values.limits ? (JSON.parse(values.limits) as ResourceLimits) : undefined;

const rssMb = (): number => process.memoryUsage.rss() / 1024 ** 2;
const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** One worker, resolved once it runs its (empty) script. */
function bareWorker(): Promise<Worker> {
  const worker = new Worker('setInterval(() => {}, 2 ** 30);', { eval: true, ...(resourceLimits ? { resourceLimits } : {}) });
  return new Promise((resolve, reject) => {
    worker.once('online', () => resolve(worker));
    worker.once('error', reject);
  });
}

await sleep(300);
const rssBefore = rssMb();
await sleep(settleMs);
const rssBeforeSettled = rssMb();
const cpuBefore = cpuMs();
const started = performance.now();
const workers: Worker[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      next += 1;
      workers.push(await bareWorker());
    }
  }),
);
const allOnlineMs = performance.now() - started;
// Let each isolate finish what it does after 'online' (bootstrap tail, first GC) before reading RSS.
await sleep(1_000);
const rssOnline = rssMb();
const cpuPerWorkerMs = (cpuMs() - cpuBefore) / count;
await sleep(settleMs);
const rssSettledPerWorkerMb = (rssMb() - rssBeforeSettled) / count;
process.stdout.write(`${JSON.stringify({ workers: count, rssPerWorkerMb: (rssOnline - rssBefore) / count, rssSettledPerWorkerMb, cpuPerWorkerMs, allOnlineMs })}\n`);
await Promise.all(workers.map((worker) => worker.terminate()));
