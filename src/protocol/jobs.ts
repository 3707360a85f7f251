// One-shot jobs run on the piscina pool (workers/jobs/).
import type { MessagePort } from 'node:worker_threads';
import type { ErrorBody } from './errors.js';
import type { ServerConfig } from './server-config.js';

/** R9: a temporary connection of its own; the live one is never touched. */
export interface TestConnectionTask {
  config: ServerConfig;
  /** The server's log file: the temporary child's stderr goes there too. */
  logFile: string;
  /**
   * For a server that signs in with OAuth: its stored access token (null: none
   * usable). Only the access token: a refresh here would spend the refresh
   * token the live actor holds.
   */
  oauth?: { accessToken: string | null };
  /** Where the job posts its stdio child's pid once spawned: a job ended from outside leaves the child to be killed. */
  pids?: MessagePort;
}

export interface TestConnectionReport {
  ok: boolean;
  latency_ms: number;
  protocol_version: string | null;
  server_info: { name: string; version: string } | null;
  /** Items on the first page of each advertised list; null when not advertised. */
  capabilities: { tools: number | null; resources: number | null; prompts: number | null } | null;
  error?: ErrorBody;
}
