// How soon a dead worker is replaced. Pure, so the policy is unit-testable and
// every supervised worker (an upstream's actor, the DB writer) follows the same one.

export interface RestartSchedule {
  /** The wait before the first replacement after a worker that had stayed up. */
  baseMs: number;
  /** Doubling stops here. */
  capMs: number;
  /** A worker that stayed up this long starts the count over: its death was not part of a crash loop. */
  resetAfterMs: number;
}

/** The wait before replacement number `attempt` (0 = the first) of a run: doubling from baseMs, capped at capMs. */
export function restartDelay({ baseMs, capMs }: Pick<RestartSchedule, 'baseMs' | 'capMs'>, attempt: number): number {
  return Math.min(capMs, baseMs * 2 ** attempt);
}

/** The attempt a death starts: the run goes on, unless the worker that died had stayed up resetAfterMs. */
export function attemptAfterDeath(schedule: RestartSchedule, attempt: number, upMs: number): number {
  return upMs >= schedule.resetAfterMs ? 0 : attempt;
}
