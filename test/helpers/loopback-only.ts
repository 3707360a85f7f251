// Preloaded (node --import) into third-party upstreams that listen on every
// interface by default (server-everything's HTTP mode): forces 127.0.0.1.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    const port = args[0];
    const rest = args.slice(1).filter((arg) => typeof arg === 'function');
    return (listen as (...a: unknown[]) => net.Server).call(this, { port: Number(port), host: '127.0.0.1' }, ...rest);
  }
  if (args[0] && typeof args[0] === 'object') (args[0] as net.ListenOptions).host = '127.0.0.1';
  return (listen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof listen;
