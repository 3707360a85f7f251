// The daemon process's own metrics, read at scrape time only. Not prom-client's
// default set: its GC observer runs JavaScript on every garbage collection,
// which cost a tools/call about a tenth of its main-thread time here. The
// event-loop delay is sampled by Node's native histogram (no JavaScript per
// sample) and reported for the time since the previous scrape.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Each sample is a timer that wakes an idle loop (about 100 µs of CPU each on
 * a loaded machine): at 20 ms that was most of what the metrics cost a lightly
 * used daemon. A stall of 200 ms or more is always seen; a shorter one with
 * the chance of its share of 200 ms.
 */
const DELAY_RESOLUTION_MS = 200;

export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  const memory = (name: string, help: string, read: (usage: NodeJS.MemoryUsage) => number): void => {
    new Gauge({ name, help, registers, collect() { this.set(read(process.memoryUsage())); } });
  };
  memory('process_resident_memory_bytes', 'Resident memory of the daemon process (all its threads)', (usage) => usage.rss);
  memory('nodejs_heap_size_used_bytes', "The main thread's V8 heap in use", (usage) => usage.heapUsed);
  memory('nodejs_heap_size_total_bytes', "The main thread's V8 heap size", (usage) => usage.heapTotal);
  memory('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript (buffers)', (usage) => usage.external);
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'CPU time of the daemon process (all its threads), user and system',
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });

  const delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
  delay.enable();
  const lag = (name: string, help: string, read: () => number): Gauge =>
    new Gauge({ name, help, registers, collect() { this.set(delay.count > 0 ? read() / 1e9 : 0); } });
  lag('nodejs_eventloop_lag_p50_seconds', 'Main-thread event-loop delay since the previous scrape, median', () => delay.percentile(50));
  lag('nodejs_eventloop_lag_p99_seconds', 'Main-thread event-loop delay since the previous scrape, 99th percentile', () => delay.percentile(99));
  // Collected last of the three: it starts the next interval.
  new Gauge({
    name: 'nodejs_eventloop_lag_max_seconds',
    help: 'Main-thread event-loop delay since the previous scrape, maximum',
    registers,
    collect() {
      this.set(delay.count > 0 ? delay.max / 1e9 : 0);
      delay.reset();
    },
  });
}
