// Sampling loops, all bounded by a count and a deadline. Paths measured side
// by side are interleaved round by round (in rotating order), so drift on a
// shared machine hits every path alike and the ratios hold.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { timed } from './clients.js';
import { summarize, type Summary } from './stats.js';

export interface Path {
  name: string;
  step: () => Promise<unknown>;
}

export interface Interleaved {
  samples: Record<string, number[]>;
  /** The warm-up rounds' timings, first to last (not in the summaries). */
  warmup: Record<string, number[]>;
  summaries: Record<string, Summary>;
  rounds: number;
  /** True when the deadline, not the count, ended the loop. */
  cutShort: boolean;
}

export interface LoopOptions {
  rounds: number;
  /** Warm-up rounds at least ... */
  warmup: number;
  /** ... and for at least this long: V8 optimises each worker's code on its own, after thousands of calls. */
  warmupMs?: number;
  deadlineMs: number;
}

export async function interleave(paths: Path[], options: LoopOptions): Promise<Interleaved> {
  const samples: Record<string, number[]> = Object.fromEntries(paths.map((path) => [path.name, []]));
  const warmup: Record<string, number[]> = Object.fromEntries(paths.map((path) => [path.name, []]));
  const warmUntil = Date.now() + (options.warmupMs ?? 0);
  for (let round = 0; round < options.warmup || Date.now() < warmUntil; round++) {
    for (const path of paths) warmup[path.name]!.push(await timed(path.step));
  }
  const until = Date.now() + options.deadlineMs;
  let rounds = 0;
  for (; rounds < options.rounds && Date.now() < until; rounds++) {
    for (let offset = 0; offset < paths.length; offset++) {
      const path = paths[(rounds + offset) % paths.length]!;
      samples[path.name]!.push(await timed(path.step));
    }
  }
  const summaries = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, summarize(values)]));
  return { samples, warmup, summaries, rounds, cutShort: rounds < options.rounds };
}

export interface ThroughputResult {
  callsPerSecond: number;
  calls: number;
  errors: number;
  seconds: number;
  latency: Summary;
}

/**
 * `workers` concurrent loops, each calling its own sequence of tools, for
 * `durationMs`; calls in flight at the end are waited for and not counted.
 */
export async function throughput(workers: Array<{ call: () => Promise<unknown> }>, durationMs: number): Promise<ThroughputResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = Date.now();
  const until = started + durationMs;
  let counted = 0;
  await Promise.all(
    workers.map(async (worker) => {
      while (Date.now() < until) {
        try {
          const ms = await timed(worker.call);
          if (Date.now() <= until) {
            latencies.push(ms);
            counted++;
          }
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = durationMs / 1000;
  return { callsPerSecond: counted / seconds, calls: counted, errors, seconds, latency: summarize(latencies) };
}

/** Round-robin over tools of one client. */
export function roundRobin(client: Client, tools: string[], start = 0): { call: () => Promise<unknown> } {
  let next = start;
  return {
    call: async () => {
      const name = tools[next++ % tools.length]!;
      const result = await client.callTool({ name, arguments: { text: 'ping' } }, undefined, { timeout: 30_000 });
      if (result.isError) throw new Error(`${name} isError`);
    },
  };
}
