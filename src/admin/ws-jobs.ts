// The admin commands: ping and subscribe answer at once; refresh and test are
// jobs that may take as long as an upstream does, so they run in the
// background with a `started` progress, a `waiting` one every
// progressIntervalMs, and exactly one result. Every failure reaches the client
// as an error body with a stable code; one without a code is logged and
// answered as INTERNAL.
import type { Logger } from '../log.js';
import type { AdminCommand, AdminServerMessage } from '../protocol/admin.js';
import { CofferError, type ErrorBody } from '../protocol/errors.js';
import type { AdminClient } from './ws-client.js';
import type { AdminWsOptions } from './ws-options.js';

export interface JobContext {
  options: Pick<AdminWsOptions, 'maxInFlight' | 'progressIntervalMs'>;
  /** Drop the server's list cache and list live; rejects with a CofferError. */
  refresh(server: string): Promise<unknown>;
  /** Test connection; rejects with a CofferError. */
  test(server: string): Promise<unknown>;
  send(client: AdminClient, message: AdminServerMessage): void;
  /** A command refused as a bad frame (it counts toward the bad-frame limit). */
  badFrame(client: AdminClient, error: ErrorBody, id: string): void;
  log: Logger;
}

export function handleCommand(context: JobContext, client: AdminClient, command: AdminCommand): void {
  const { send, badFrame, options } = context;
  switch (command.type) {
    case 'ping':
      return send(client, { type: 'result', id: command.id, ok: true, data: { pong: true, at: new Date().toISOString() } });
    case 'subscribe':
      return send(client, { type: 'result', id: command.id, ok: true, data: client.filter.set(command.types, command.servers) });
    case 'refresh':
    case 'test': {
      if (client.inFlight.has(command.id)) return badFrame(client, { code: 'BAD_REQUEST', message: `a command with id '${command.id}' is still running: use a new id` }, command.id);
      if (client.inFlight.size >= options.maxInFlight) {
        return badFrame(client, { code: 'BAD_REQUEST', message: `more than ${options.maxInFlight} commands in flight: wait for a result` }, command.id);
      }
      client.inFlight.add(command.id);
      const server = command.server;
      if (command.type === 'refresh') {
        void runJob(context, client, command.id, `refresh '${server}'`, `refreshing '${server}': dropping its cache and listing tools, resources and prompts…`, () => context.refresh(server));
      } else {
        void runJob(context, client, command.id, `test '${server}'`, `testing '${server}': opening a temporary connection…`, () => context.test(server));
      }
      return;
    }
  }
}

async function runJob(context: JobContext, client: AdminClient, id: string, label: string, startMessage: string, job: () => Promise<unknown>): Promise<void> {
  const { send } = context;
  const started = Date.now();
  send(client, { type: 'progress', id, stage: 'started', message: startMessage, elapsed_ms: 0 });
  const ticker = setInterval(() => {
    const elapsed = Date.now() - started;
    send(client, { type: 'progress', id, stage: 'waiting', message: `${label}: still waiting (${Math.round(elapsed / 1000)} s)…`, elapsed_ms: elapsed });
  }, context.options.progressIntervalMs);
  try {
    const data = await job();
    send(client, { type: 'result', id, ok: true, data });
  } catch (error) {
    let body = errorBodyOf(error);
    if (body === null) {
      context.log.error('admin ws: command failed', { client: client.serial, label, error: String(error) });
      body = { code: 'INTERNAL', message: 'internal error in coffer; see the daemon log' };
    }
    send(client, { type: 'result', id, ok: false, error: body });
  } finally {
    clearInterval(ticker);
    client.inFlight.delete(id);
  }
}

function errorBodyOf(error: unknown): ErrorBody | null {
  if (error instanceof CofferError) return error.toBody();
  // A CofferError that crossed a boundary as plain data.
  const candidate = error as { code?: unknown; message?: unknown; details?: unknown } | null;
  if (candidate && typeof candidate === 'object' && typeof candidate.code === 'string' && typeof candidate.message === 'string' && /^[A-Z_]+$/.test(candidate.code)) {
    return candidate.details === undefined
      ? { code: candidate.code as ErrorBody['code'], message: candidate.message }
      : { code: candidate.code as ErrorBody['code'], message: candidate.message, details: candidate.details };
  }
  return null;
}
