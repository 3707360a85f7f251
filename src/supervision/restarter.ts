// One supervised worker's "replace after death" cycle: the wait the schedule
// gives, then one replacement. Never two replacements at once, and stop()
// cancels a replacement that has not started. What a replacement is (a worker
// thread and its handshake) is the owner's business: `replace` says whether it
// came up; one that did not, or that dies while starting, is a failed attempt.
import { attemptAfterDeath, restartDelay, type RestartSchedule } from './restart-schedule.js';

/** A replacement waiting for its turn: the number of this attempt in the run (1 = the first), its wait and when it starts. */
export interface RestartWait {
  attempt: number;
  delayMs: number;
  at: number;
}

export interface RestarterHooks {
  /** Starts a replacement; true once it is up. */
  replace(): Promise<boolean>;
  /** A replacement is scheduled (after a death or a failed attempt). */
  onWait?(wait: RestartWait): void;
}

type Phase = 'up' | 'waiting' | 'starting';

export class Restarter {
  private phase: Phase = 'up';
  private stopped = false;
  /** Replacements in the current run. */
  private attempt = 0;
  private upSince = Date.now();
  private diedWhileStarting = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly schedule: RestartSchedule,
    private readonly hooks: RestarterHooks,
  ) {}

  /** The current worker died: its replacement is scheduled (once, however often this is told). */
  died(): void {
    if (this.phase === 'starting') this.diedWhileStarting = true;
    if (this.phase !== 'up' || this.stopped) return;
    this.attempt = attemptAfterDeath(this.schedule, this.attempt, Date.now() - this.upSince);
    this.wait();
  }

  /** No more replacements; one that is waiting is cancelled. Idempotent. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private wait(): void {
    const delayMs = restartDelay(this.schedule, this.attempt);
    this.attempt += 1;
    this.phase = 'waiting';
    this.timer = setTimeout(() => void this.start(), delayMs);
    this.hooks.onWait?.({ attempt: this.attempt, delayMs, at: Date.now() + delayMs });
  }

  private async start(): Promise<void> {
    this.phase = 'starting';
    this.diedWhileStarting = false;
    const up = await this.hooks.replace().catch(() => false);
    if (this.stopped) return;
    if (up && !this.diedWhileStarting) {
      this.phase = 'up';
      this.upSince = Date.now();
      return;
    }
    this.wait();
  }
}
