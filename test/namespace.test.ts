import t from 'tap';
import fc from 'fast-check';
import { DOT_SEGMENTS } from '../src/protocol/server-config.js';
import { namespaceName, namespaceUri, parseNamespacedName, parseNamespacedUri } from '../src/router/namespace.js';

// Every name a server may have: `.` and `..` are refused at registration (a URL path cannot hold them).
const serverName = fc.stringMatching(/^[A-Za-z0-9.-]{1,20}$/).filter((name) => !name.includes('__') && !DOT_SEGMENTS.has(name));

t.test('tool and prompt names round-trip, even when the original contains __', async (t) => {
  fc.assert(
    fc.property(serverName, fc.string({ minLength: 1 }), (server, name) => {
      const parsed = parseNamespacedName(namespaceName(server, name));
      return parsed !== null && parsed.server === server && parsed.original === name;
    }),
  );
  t.same(parseNamespacedName('files__read__file'), { server: 'files', original: 'read__file' });
});

t.test('resource URIs round-trip through coffer://<server>/<uri>', async (t) => {
  fc.assert(
    fc.property(serverName, fc.string({ minLength: 1 }), (server, uri) => {
      const parsed = parseNamespacedUri(namespaceUri(server, uri));
      return parsed !== null && parsed.server === server && parsed.original === uri;
    }),
  );
  t.equal(namespaceUri('files', 'file:///tmp/a.txt'), 'coffer://files/file:///tmp/a.txt');
  t.same(parseNamespacedUri('coffer://files/file:///tmp/a.txt'), { server: 'files', original: 'file:///tmp/a.txt' });
  t.same(parseNamespacedUri('COFFER://files/file:///tmp/a.txt'), { server: 'files', original: 'file:///tmp/a.txt' }, 'the scheme in any case');
});

t.test('malformed names and URIs are rejected, not guessed', async (t) => {
  for (const bad of ['', 'echo', '__echo', 'srv__', 'bad name__x', '../x__y']) t.equal(parseNamespacedName(bad), null, JSON.stringify(bad));
  for (const bad of ['file:///x', 'coffer://', 'coffer://srv', 'coffer://srv/', 'coffer:///x', 'coffer://a__b/x', 'coffer://sp ace/x']) {
    t.equal(parseNamespacedUri(bad), null, JSON.stringify(bad));
  }
});
