// Preloaded (node --import) into the peer gateway: it listens on every
// interface by default; force 127.0.0.1. Outbound fetches to anything but
// loopback are refused (its marketplace catalogue is pre-seeded, so none
// should happen), keeping the whole benchmark on this machine.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const rest = args.slice(1).filter((arg) => typeof arg === 'function');
    return (listen as (...a: unknown[]) => net.Server).call(this, { port: Number(args[0]), host: '127.0.0.1' }, ...rest);
  }
  if (args[0] && typeof args[0] === 'object') (args[0] as net.ListenOptions).host = '127.0.0.1';
  return (listen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof listen;

const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') throw new Error(`benchmark: outbound fetch to ${url.hostname} refused`);
  return realFetch(input, init);
}) as typeof fetch;
