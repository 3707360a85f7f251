// The URI rule in isolation: RFC 3986 §6.2.2 normalisation, and which switch
// governs a URI (its resource, else its templates, else none = the policy).
import t from 'tap';
import { normaliseUri, removeDotSegments, ResourceKeys } from '../src/router/uri-rule.js';

t.test('normalisation: scheme and host case, percent-encoding, dot segments', async (t) => {
  const cases: Array<[string, string]> = [
    ['demo://resource/static/document/x.md', 'demo://resource/static/document/x.md'],
    ['DEMO://resource/static/document/x.md', 'demo://resource/static/document/x.md'],
    ['Demo://Resource/Static/x.md', 'demo://resource/Static/x.md'],
    ['demo://resource/static/document/./x.md', 'demo://resource/static/document/x.md'],
    ['demo://resource/static/document/a/../x.md', 'demo://resource/static/document/x.md'],
    ['demo://resource/static/document/a/b/../../x.md', 'demo://resource/static/document/x.md'],
    ['demo://resource/static/document/%2E%2E/document/x.md', 'demo://resource/static/document/x.md'],
    ['demo://resource/static/document/%78.md', 'demo://resource/static/document/x.md'],
    ['demo://resource/a%2fb', 'demo://resource/a%2Fb'],
    ['demo://resource/a%2Fb', 'demo://resource/a%2Fb'],
    ['demo://resource/%7e%41', 'demo://resource/~A'],
    ['demo://resource/%zz', 'demo://resource/%zz'],
    ['file:///tmp/./a/../b.txt', 'file:///tmp/b.txt'],
    ['file:///../../etc/passwd', 'file:///etc/passwd'],
    ['HTTP://User@Example.COM:8080/A/./b?Q=%61#F', 'http://User@example.com:8080/A/b?Q=a#F'],
    ['http://[::1]:80/x', 'http://[::1]:80/x'],
    ['demo://h/a?x=./../y', 'demo://h/a?x=./../y'],
    ['urn:ISBN:0451450523', 'urn:ISBN:0451450523'],
    ['mailto:A@B.example', 'mailto:A@B.example'],
    ['relative/./../x', 'relative/./../x'],
  ];
  for (const [input, expected] of cases) t.equal(normaliseUri(input), expected, input);
  for (const [input] of cases) t.equal(normaliseUri(normaliseUri(input)), normaliseUri(input), `idempotent: ${input}`);
});

t.test('remove_dot_segments: the examples of RFC 3986 §5.2.4 and §5.4', async (t) => {
  const cases: Array<[string, string]> = [
    ['/a/b/c/./../../g', '/a/g'],
    ['mid/content=5/../6', 'mid/6'],
    ['/b/c/../../../g', '/g'],
    ['/b/c/./g/.', '/b/c/g/'],
    ['/b/c/g/..', '/b/c/'],
    ['/b/c/..g', '/b/c/..g'],
    ['', ''],
  ];
  for (const [input, expected] of cases) t.equal(removeDotSegments(input), expected, input);
});

/** Keys and their switches, asked as the gate asks. */
function switched(rows: Array<[string, boolean]>): { governing(uri: string): ReturnType<ResourceKeys['governing']> } {
  const enabled = new Map(rows);
  const keys = new ResourceKeys(enabled.keys());
  return { governing: (uri) => keys.governing(uri, (key) => enabled.get(key) === true) };
}

t.test('the governing switch: the resource, else its templates, else none', async (t) => {
  const switches = switched([
    ['demo://resource/static/document/x.md', false],
    ['demo://resource/static/document/y.md', true],
    ['demo://resource/dynamic/text/{index}', false],
    ['demo://resource/dynamic/blob/{index}', true],
    ['demo://resource/dynamic/blob/7', false],
    ['files://{+path}', true],
    ['files://secret/{name}', false],
    ['DEMO://resource/static/document/Y.md', true],
  ]);
  const cases: Array<[string, ReturnType<ResourceKeys['governing']>]> = [
    ['demo://resource/static/document/x.md', { by: 'resource', key: 'demo://resource/static/document/x.md', enabled: false }],
    ['DEMO://resource/static/document/x.md', { by: 'resource', key: 'demo://resource/static/document/x.md', enabled: false }],
    ['demo://resource/static/document/./x.md', { by: 'resource', key: 'demo://resource/static/document/x.md', enabled: false }],
    ['demo://resource/static/document/a/../x.md', { by: 'resource', key: 'demo://resource/static/document/x.md', enabled: false }],
    ['demo://resource/static/document/%78.md', { by: 'resource', key: 'demo://resource/static/document/x.md', enabled: false }],
    ['demo://resource/static/document/y.md', { by: 'resource', key: 'demo://resource/static/document/y.md', enabled: true }],
    ['demo://resource/dynamic/text/5', { by: 'template', key: 'demo://resource/dynamic/text/{index}', enabled: false }],
    ['DEMO://resource/dynamic/text/./5', { by: 'template', key: 'demo://resource/dynamic/text/{index}', enabled: false }],
    ['demo://resource/dynamic/blob/x/../5', { by: 'template', key: 'demo://resource/dynamic/blob/{index}', enabled: true }],
    ['demo://resource/dynamic/blob/7', { by: 'resource', key: 'demo://resource/dynamic/blob/7', enabled: false }],
    ['demo://resource/dynamic/text/{index}', { by: 'template', key: 'demo://resource/dynamic/text/{index}', enabled: false }],
    ['files://public/a.txt', { by: 'template', key: 'files://{+path}', enabled: true }],
    ['files://secret/a.txt', { by: 'template', key: 'files://secret/{name}', enabled: false }],
    ['files://secret/x/../a.txt', { by: 'template', key: 'files://secret/{name}', enabled: false }],
    ['demo://resource/other', null],
  ];
  for (const [uri, expected] of cases) t.same(switches.governing(uri), expected, uri);
});

t.test('two keys that are one resource: disabled if either is', async (t) => {
  const switches = switched([
    ['demo://h/a', true],
    ['DEMO://h/./a', false],
  ]);
  t.match(switches.governing('demo://h/a'), { by: 'resource', enabled: false });
});
