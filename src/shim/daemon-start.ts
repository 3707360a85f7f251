// Starting a daemon for the shim: only when none runs at the shim's start-up
// (never on reconnect, so a `coffer daemon stop` is respected). While it
// starts, its own start timeout bounds the client's queued requests; when it
// cannot start, nobody else will, so they fail at once instead of at the bound.
import type { DaemonEndpoint } from './link-lifecycle.js';

export interface DaemonStartOptions {
  startDaemon(): Promise<void>;
  locate(): Promise<DaemonEndpoint | null>;
  log(line: string): void;
}

export interface DaemonStartHooks {
  /** The daemon started: queued requests get their usual deadline. */
  started(): void;
  /** It could not start (first line of why): queued requests fail now. */
  failed(reason: string): void;
}

export class DaemonStarter {
  /** True while a start is under way (queued requests then wait without a deadline of their own). */
  starting = false;

  constructor(
    private readonly options: DaemonStartOptions,
    private readonly hooks: DaemonStartHooks,
  ) {}

  /** The endpoint of the started daemon, or null when it could not be started. */
  async start(): Promise<DaemonEndpoint | null> {
    this.options.log('no daemon is running: starting one');
    this.starting = true;
    try {
      await this.options.startDaemon();
      this.hooks.started();
    } catch (error) {
      this.options.log(`starting the daemon failed: ${(error as Error).message}`);
      this.hooks.failed((error as Error).message.split('\n')[0]!);
      return null;
    } finally {
      this.starting = false;
    }
    return this.options.locate();
  }
}
