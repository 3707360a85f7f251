// Worker entry of one upstream actor: wires the supervisor (connection
// lifecycle), the lister (lists and their cache), the forwarder, the
// per-session connections and the client relay, and answers the router's
// CallMessages (lists, forwards, cancels, commands, heap reports, shutdown), in order, on the
// calls port.
import { getHeapStatistics } from 'node:v8';
import { isMainThread, workerData } from 'node:worker_threads';
import type { ActorCommand, ActorEvent, ActorInit, CallAnswer, CallMessage, ListOutcome } from '../../src/protocol/actor.js';
import { messageOf } from '../../src/protocol/errors.js';
import { ClientRelay } from './client-relay.js';
import type { ConnectionHooks } from './connection.js';
import { Forwarder } from './forwarder.js';
import { ListCache } from './list-cache.js';
import { Lister } from './lister.js';
import { openLog } from './log.js';
import { SessionConnections } from './session-connections.js';
import { started } from './started.cjs';
import { Supervisor } from './supervisor.js';
import { noOAuth, upstreamAuth } from './oauth/setup.js';

if (isMainThread) throw new Error('workers/actor/main.js runs as a worker thread');

const init = workerData as ActorInit;
const log = openLog(init.logFile, init.config.name);
const emit = (event: ActorEvent): void => init.events.postMessage(event);

/** Server messages of a connection: list changes refresh the cache, the rest is for clients. */
function serverMessages(session: string | null): Pick<ConnectionHooks, 'onNotification' | 'onRequest'> {
  return {
    onNotification: (method, params, contexts) => {
      if (method.endsWith('/list_changed')) lister.notified(method);
      else relay.notification(session, method, params, contexts);
    },
    onRequest: (method, params, contexts, signal, notify) => relay.request(session, method, params, contexts, signal, notify),
  };
}

const auth = upstreamAuth(init, log, {
  save: (record) => emit({ type: 'oauth_saved', server: init.config.name, record }),
  signedIn: () => supervisor.signedIn(),
  signedOut: () => {
    supervisor.signedOut();
    void sessions?.closeAll(false);
  },
});
const supervisor: Supervisor = new Supervisor(init.config, init.tuning, log, {
  onState: (status) => {
    emit({ type: 'state', server: init.config.name, status });
    if (status.state === 'ready') started();
  },
  onSessionStart: () => lister.sessionStarted(),
  onSessionEnd: () => lister.sessionEnded(),
  connection: serverMessages(null),
}, auth);
const sessions = init.config.session_mode === 'per_session' ? new SessionConnections(init.config, log, serverMessages, auth) : null;
const cache = new ListCache(init.tuning.cacheTtlMs);
const lister = new Lister(init.config, supervisor, cache, log, emit);
const forwarder = new Forwarder(init.config, supervisor, sessions);
const relay = new ClientRelay({ server: init.config.name, timeoutMs: init.config.timeouts.request_ms, sessionOf: (id) => forwarder.sessionOf(id), clientOf: (id) => forwarder.clientOf(id), answerTimeoutOf: (id) => forwarder.answerTimeoutOf(id), hold: (id) => forwarder.hold(id), emit, note: (text) => log.note(text) });

/** Sub-millisecond wall time, comparable across threads (each has its own performance.timeOrigin). */
const epochMs = (): number => performance.timeOrigin + performance.now();

/** An answer that cannot be sent (not cloneable) is still answered, as a failure. */
function answer(reply: CallAnswer, transfer: ArrayBuffer[] = []): void {
  try {
    init.calls.postMessage(reply, transfer);
  } catch (error) {
    init.calls.postMessage({ seq: reply.seq, failure: `the answer could not be passed on: ${messageOf(error)}` } satisfies CallAnswer);
  }
}

/** Live items cross the thread boundary as a transferred buffer, not a structured clone. */
function answerList(seq: number, list: ListOutcome): void {
  answer({ seq, list }, list.ok && list.state === 'live' ? [list.list.bytes.buffer as ArrayBuffer] : []);
}

/** The main thread terminates the worker once this is answered (or at its deadline). */
async function shutdown(): Promise<void> {
  forwarder.cancelAll('actor shutting down');
  relay.abandonAll();
  auth?.close();
  await Promise.all([supervisor.shutdown(), sessions?.closeAll()]);
  await log.close();
  init.events.close();
}

function command(command: ActorCommand): void {
  switch (command.type) {
    case 'answer':
      relay.answer(command.ticket, command.outcome);
      break;
    case 'notify':
      // Client notifications matter to a connection that declared that client's capabilities: per_session only.
      void sessions?.current(command.session)?.notify(command.method, command.params).catch(() => undefined);
      break;
    case 'close_session':
      void sessions?.close(command.session);
      break;
    case 'progress':
      relay.progress(command.ticket, command.params);
      break;
  }
}

init.calls.on('message', (message: CallMessage) => {
  switch (message.type) {
    case 'forward': {
      const { seq } = message;
      const sentAt = message.req.timed ? epochMs() : 0;
      // Progress goes on this port too, so it always arrives before its call's answer.
      forwarder.forward(message.req, (progress) => init.calls.postMessage({ seq, progress })).then(
        (outcome) => answer(message.req.timed ? { seq, outcome, upstreamAt: [sentAt, epochMs()] } : { seq, outcome }),
        (error: unknown) => answer({ seq, failure: messageOf(error) }),
      );
      break;
    }
    case 'list': {
      const { seq } = message;
      lister.list(message.kind, message.fresh).then(
        (list) => answerList(seq, list),
        (error: unknown) => answer({ seq, failure: messageOf(error) }),
      );
      break;
    }
    case 'shutdown': {
      const { seq } = message;
      shutdown().then(
        () => answer({ seq, done: true }),
        (error: unknown) => answer({ seq, failure: messageOf(error) }),
      );
      break;
    }
    case 'cancel':
      forwarder.cancel(message.id, message.reason);
      break;
    case 'oauth': {
      const { seq } = message;
      const outcome = auth ? auth.act(message.action) : Promise.resolve(noOAuth(init.config.name));
      outcome.then((oauth) => answer({ seq, oauth }), (error: unknown) => answer({ seq, failure: messageOf(error) }));
      break;
    }
    case 'heap': {
      const { used_heap_size: used, total_heap_size: total, heap_size_limit: limit } = getHeapStatistics();
      answer({ seq: message.seq, heap: { used, total, limit } });
      break;
    }
    case 'command':
      command(message.command);
      break;
  }
});

supervisor.start();
