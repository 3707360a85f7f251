import t from 'tap';
import { isAllowedHost, isAllowedOrigin } from '../src/http/host-check.js';

t.test('Host must be a loopback name with our port', async (t) => {
  for (const host of ['127.0.0.1:7077', 'localhost:7077', 'LOCALHOST:7077', '[::1]:7077']) t.ok(isAllowedHost(host, 7077), host);
  for (const host of [undefined, '', 'evil.example:7077', '127.0.0.1:7078', '127.0.0.1', 'localhost.evil.example:7077', '127.0.0.2:7077', '0.0.0.0:7077']) {
    t.notOk(isAllowedHost(host, 7077), String(host));
  }
});

t.test('Origin, when present, must be a loopback page', async (t) => {
  for (const origin of [undefined, '', 'http://localhost:7077', 'http://127.0.0.1:3000', 'https://[::1]']) t.ok(isAllowedOrigin(origin), String(origin));
  for (const origin of ['http://evil.example', 'null', 'file://', 'http://127.0.0.1.evil.example', 'chrome-extension://abc', 'ftp://localhost', 'ws://127.0.0.1:7077', 'chrome-extension://localhost']) t.notOk(isAllowedOrigin(origin), origin);
});
