// Reconnect delays: the shared doubling schedule (src/supervision/), with jitter. Pure, so the policy is unit-testable.
import type { ActorTuning } from '../../src/protocol/actor.js';
import { restartDelay } from '../../src/supervision/restart-schedule.js';

export type BackoffTuning = Pick<ActorTuning, 'backoffInitialMs' | 'backoffMaxMs' | 'crashLoopLimit'>;

export interface RetryPlan {
  /** `failed` once the crash-loop limit is reached; retries then continue slowly. */
  state: 'backoff' | 'failed';
  delayMs: number;
}

/**
 * The plan after the `failures`-th consecutive failure (1-based). Jitter keeps
 * half of the exponential delay fixed and randomises the other half, so many
 * actors failing together do not retry in lockstep.
 */
export function retryPlan(failures: number, tuning: BackoffTuning, random: () => number = Math.random): RetryPlan {
  if (failures >= tuning.crashLoopLimit) return { state: 'failed', delayMs: tuning.backoffMaxMs };
  const capped = restartDelay({ baseMs: tuning.backoffInitialMs, capMs: tuning.backoffMaxMs }, Math.max(0, failures - 1));
  return { state: 'backoff', delayMs: Math.round(capped / 2 + (capped / 2) * random()) };
}
