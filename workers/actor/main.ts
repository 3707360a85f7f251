// Worker entry of one upstream actor: wires the supervisor (connection
// lifecycle), the lister (lists and their cache) and the forwarder, and
// exposes them to the router as ActorApi over comlink.
import { parentPort, workerData } from 'node:worker_threads';
import type { ActorApi, ActorEvent, ActorInit, ListOutcome } from '../../src/protocol/actor.js';
import { Comlink, endpoint } from '../../src/protocol/comlink.js';
import { Forwarder } from './forwarder.js';
import { ListCache } from './list-cache.js';
import { Lister } from './lister.js';
import { openLog } from './log.js';
import { Supervisor } from './supervisor.js';

if (!parentPort) throw new Error('workers/actor/main.js runs as a worker thread');

const init = workerData as ActorInit;
const log = openLog(init.logFile);
const emit = (event: ActorEvent): void => init.events.postMessage(event);

const supervisor: Supervisor = new Supervisor(init.config, init.tuning, log, {
  onState: (status) => emit({ type: 'state', server: init.config.name, status }),
  onSessionStart: () => lister.sessionStarted(),
  onSessionEnd: () => lister.sessionEnded(),
  onNotification: (method) => lister.notified(method),
});
const cache = new ListCache(init.tuning.cacheTtlMs);
const lister = new Lister(init.config, supervisor, cache, log, emit);
const forwarder = new Forwarder(init.config, supervisor, emit);

/** Live items cross the thread boundary as a transferred buffer, not a structured clone. */
function transferable(outcome: ListOutcome): ListOutcome {
  return outcome.ok && outcome.state === 'live' ? Comlink.transfer(outcome, [outcome.packed.buffer]) : outcome;
}

const api: ActorApi = {
  list: async (kind, fresh) => transferable(await lister.list(kind, fresh)),
  forward: (req) => forwarder.forward(req),
  cancel: (id, reason) => forwarder.cancel(id, reason),
  dropCache: () => void cache.dropAll(),
  status: () => supervisor.status(),
  shutdown: async () => {
    forwarder.cancelAll('actor shutting down');
    await supervisor.shutdown();
    await log.close();
    init.events.close();
  },
};

Comlink.expose(api, endpoint(parentPort));
supervisor.start();
