// Slots: the bound on work at once (actor boots, test connections).
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Slots } from '../src/supervision/slots.js';

t.test('a freed slot goes to the longest waiter; a waiter that gave up is never handed one', async (t) => {
  const slots = new Slots(1);
  const first = await slots.acquire();
  t.equal(await slots.acquireWithin(20), null, 'none came free in time');
  const order: string[] = [];
  const a = slots.acquire().then((release) => (order.push('a'), release));
  const b = slots.acquireWithin(5_000).then((release) => (order.push('b'), release));
  first();
  first();
  const releaseA = await a;
  await sleep(20);
  t.same(order, ['a'], 'one slot, one taker: freeing twice frees once');
  releaseA();
  const releaseB = await b;
  t.same(order, ['a', 'b']);
  t.ok(releaseB);
  releaseB!();
  t.type(await slots.acquireWithin(0), 'function', 'free again at once');
});
