// Pure validation of server configs: defaults, every problem reported, patches, redaction.
import t from 'tap';
import { DEFAULT_TIMEOUTS, type ServerConfig } from '../src/protocol/server-config.js';
import { parseServerConfig, redactConfig, REDACTED, type FieldError } from '../src/registry/server-config.js';
import { serverConfigJsonSchema } from '../src/registry/server-config-schema.js';
import { applyServerPatch } from '../src/registry/server-patch.js';

const STDIO = { type: 'stdio', command: 'npx', args: ['-y', 'server'], env: { API_KEY: 's3cret' }, cwd: null };
const HTTP = { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer s3cret' } };

function fields(result: ReturnType<typeof parseServerConfig>): string[] {
  if (result.ok) return [];
  return (result.error.details as { errors: FieldError[] }).errors.map((error) => error.field);
}

function valid(input: unknown): ServerConfig {
  const result = parseServerConfig(input);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

t.test('defaults', async (t) => {
  t.same(valid({ name: 'files', transport: { type: 'stdio', command: 'npx' } }), {
    name: 'files',
    description: '',
    enabled: true,
    transport: { type: 'stdio', command: 'npx', args: [], env: {}, cwd: null },
    auto_enable_new_capabilities: true,
    timeouts: DEFAULT_TIMEOUTS,
    namespace: 'files',
    session_mode: 'shared',
    protocol: 'auto',
  });
  t.equal(valid({ name: 'solo', namespace: '', transport: STDIO }).namespace, '', 'the empty namespace: names pass through unprefixed');
  t.equal(valid({ name: 'filesystem', namespace: 'fs', transport: STDIO }).namespace, 'fs');
  t.same(valid({ name: 'web', transport: { type: 'sse', url: 'http://127.0.0.1:3000/sse' } }).transport, {
    type: 'sse',
    url: 'http://127.0.0.1:3000/sse',
    headers: {},
  });
  t.same(valid({ name: 'web', transport: HTTP, timeouts: { request_ms: 5000 } }).timeouts, { ...DEFAULT_TIMEOUTS, request_ms: 5000 }, 'timeouts merged per field');
  const full = {
    name: 'a.b-c_d',
    description: 'd',
    enabled: false,
    transport: { ...STDIO, cwd: '/srv' },
    auto_enable_new_capabilities: false,
    timeouts: { connect_ms: 1, request_ms: 2, list_deadline_ms: 3 },
    namespace: 'abc',
    session_mode: 'per_session',
    protocol: '2026-07-28',
  };
  t.same(valid(full), full, 'a complete config comes back unchanged');
  t.same(valid(valid(full)), valid(full), 'parsing is idempotent');
});

const base = { name: 'ok', transport: STDIO };
const invalidCases: [string, unknown, string[]][] = [
  ['not an object', 'files', ['(root)']],
  ['an array', [], ['(root)']],
  ['null', null, ['(root)']],
  ['missing name and transport', {}, ['name', 'transport']],
  ['empty name', { ...base, name: '' }, ['name']],
  ['name with a space', { ...base, name: 'my files' }, ['name']],
  ['name of 65 characters', { ...base, name: 'x'.repeat(65) }, ['name']],
  ['name with the namespace separator', { ...base, name: 'a__b' }, ['name']],
  ['name that is a number', { ...base, name: 7 }, ['name']],
  ['unknown top-level field', { ...base, prefix: 'x' }, ['prefix']],
  ['namespace with the separator', { ...base, namespace: 'a__b' }, ['namespace']],
  ['namespace ending in _', { ...base, namespace: 'a_' }, ['namespace']],
  ['namespace null', { ...base, namespace: null }, ['namespace']],
  ['session_mode unknown', { ...base, session_mode: 'sticky' }, ['session_mode']],
  ['protocol unknown', { ...base, protocol: 'modern' }, ['protocol']],
  ['description not a string', { ...base, description: 3 }, ['description']],
  ['enabled as a string', { ...base, enabled: 'yes' }, ['enabled']],
  ['auto_enable null', { ...base, auto_enable_new_capabilities: null }, ['auto_enable_new_capabilities']],
  ['transport not an object', { ...base, transport: 'stdio' }, ['transport']],
  ['transport type missing', { ...base, transport: { command: 'x' } }, ['transport.type']],
  ['transport type unknown', { ...base, transport: { type: 'websocket', url: 'ws://x' } }, ['transport.type']],
  ['command missing', { ...base, transport: { type: 'stdio' } }, ['transport.command']],
  ['command blank', { ...base, transport: { type: 'stdio', command: '  ' } }, ['transport.command']],
  ['args not an array', { ...base, transport: { ...STDIO, args: '-y' } }, ['transport.args']],
  ['args with a number', { ...base, transport: { ...STDIO, args: ['a', 1] } }, ['transport.args[1]']],
  ['too many args, one not a string', { ...base, transport: { ...STDIO, args: [1, ...Array<string>(256).fill('x')] } }, ['transport.args', 'transport.args[0]']],
  ['env not an object', { ...base, transport: { ...STDIO, env: ['A=1'] } }, ['transport.env']],
  ['env value a number', { ...base, transport: { ...STDIO, env: { PORT: 80 } } }, ['transport.env.PORT']],
  ['env key with =', { ...base, transport: { ...STDIO, env: { 'A=B': 'x' } } }, ['transport.env.A=B']],
  ['env key starting with a digit', { ...base, transport: { ...STDIO, env: { '1A': 'x' } } }, ['transport.env.1A']],
  ['env value with NUL', { ...base, transport: { ...STDIO, env: { A: 'x\0y' } } }, ['transport.env.A']],
  ['env value the redaction placeholder', { ...base, transport: { ...STDIO, env: { A: REDACTED } } }, ['transport.env.A']],
  ['cwd relative', { ...base, transport: { ...STDIO, cwd: 'projects' } }, ['transport.cwd']],
  ['cwd a number', { ...base, transport: { ...STDIO, cwd: 1 } }, ['transport.cwd']],
  ['url on stdio', { ...base, transport: { ...STDIO, url: 'http://x' } }, ['transport.url']],
  ['url missing', { ...base, transport: { type: 'http' } }, ['transport.url']],
  ['url not a URL', { ...base, transport: { ...HTTP, url: 'example.com/mcp' } }, ['transport.url']],
  ['url ftp', { ...base, transport: { ...HTTP, url: 'ftp://example.com/mcp' } }, ['transport.url']],
  ['url with credentials', { ...base, transport: { ...HTTP, url: 'https://me:pw@example.com/mcp' } }, ['transport.url']],
  ['command on http', { ...base, transport: { ...HTTP, command: 'x' } }, ['transport.command']],
  ['header name with a space', { ...base, transport: { ...HTTP, headers: { 'X Key': 'v' } } }, ['transport.headers.X Key']],
  ['header value with a line break', { ...base, transport: { ...HTTP, headers: { 'X-Key': 'v\r\nHost: evil' } } }, ['transport.headers.X-Key']],
  ['header twice, case apart', { ...base, transport: { ...HTTP, headers: { 'x-key': 'a', 'X-Key': 'b' } } }, ['transport.headers.X-Key']],
  // An HTTP request cannot carry these: the server would be registered, then fail every connection.
  ['header value with a control character', { ...base, transport: { ...HTTP, headers: { 'X-Key': 'v\u0001' } } }, ['transport.headers.X-Key']],
  ['header value with DEL', { ...base, transport: { ...HTTP, headers: { 'X-Key': 'v\u007f' } } }, ['transport.headers.X-Key']],
  ['header value beyond U+00FF', { ...base, transport: { ...HTTP, headers: { Authorization: 'Bearer s3cret\u20ac' } } }, ['transport.headers.Authorization']],
  ['timeouts not an object', { ...base, timeouts: 5 }, ['timeouts']],
  ['timeout zero', { ...base, timeouts: { connect_ms: 0 } }, ['timeouts.connect_ms']],
  ['timeout fractional', { ...base, timeouts: { request_ms: 1.5 } }, ['timeouts.request_ms']],
  ['timeout as a string', { ...base, timeouts: { request_ms: '100' } }, ['timeouts.request_ms']],
  ['timeout too large', { ...base, timeouts: { list_deadline_ms: 60_001 } }, ['timeouts.list_deadline_ms']],
  ['unknown timeout', { ...base, timeouts: { idle_ms: 5 } }, ['timeouts.idle_ms']],
  [
    'every problem at once',
    { name: 'a__b', enabled: 1, transport: { type: 'http', url: 'file:///x', headers: { 'a b': 2 } }, timeouts: { connect_ms: -1 }, extra: true },
    ['extra', 'name', 'enabled', 'transport.url', 'transport.headers.a b', 'transport.headers.a b', 'timeouts.connect_ms'],
  ],
];

t.test('invalid configs list every problem', async (t) => {
  for (const [label, input, expected] of invalidCases) {
    const result = parseServerConfig(input);
    t.match(result, { ok: false, error: { code: 'CONFIG_INVALID' } }, label);
    t.same(fields(result), expected, `${label}: fields`);
  }
});

t.test('header values an HTTP request can carry are taken: tabs, spaces, Latin-1', async (t) => {
  t.equal(parseServerConfig({ name: 'x', transport: { ...HTTP, headers: { 'X-Key': 'a\tb c\u00e9\u00ff' } } }).ok, true);
});

t.test('messages never echo secret values', async (t) => {
  const result = parseServerConfig({ name: 'x', transport: { ...HTTP, headers: { 'X-Key': 'TOPSECRET\n' } } });
  t.notOk(JSON.stringify(result).includes('TOPSECRET'));
});

t.test('applyServerPatch', async (t) => {
  const stdio = valid({ name: 'files', transport: STDIO, timeouts: { connect_ms: 1000 } });
  const http = valid({ name: 'web', transport: HTTP });
  const cases: [string, ServerConfig, unknown, (config: ServerConfig) => unknown, unknown][] = [
    ['top-level fields replace', stdio, { description: 'new', enabled: false }, (c) => [c.description, c.enabled], ['new', false]],
    ['timeouts merge', stdio, { timeouts: { request_ms: 10 } }, (c) => c.timeouts, { ...DEFAULT_TIMEOUTS, connect_ms: 1000, request_ms: 10 }],
    ['transport fields merge', stdio, { transport: { args: ['--x'] } }, (c) => c.transport, { ...STDIO, args: ['--x'] }],
    ['env replaces as a whole', stdio, { transport: { env: { OTHER: '1' } } }, (c) => c.transport, { ...STDIO, env: { OTHER: '1' } }],
    [
      'a redacted value keeps the stored one',
      stdio,
      { transport: { env: { API_KEY: REDACTED, NEW: 'n' } } },
      (c) => c.transport,
      { ...STDIO, env: { API_KEY: 's3cret', NEW: 'n' } },
    ],
    [
      'another type replaces the transport',
      stdio,
      { transport: { type: 'http', url: 'http://localhost:1/mcp' } },
      (c) => c.transport,
      { type: 'http', url: 'http://localhost:1/mcp', headers: {} },
    ],
    [
      'http to sse on the same origin keeps redacted headers',
      http,
      { transport: { type: 'sse', url: 'https://example.com/sse', headers: { Authorization: REDACTED } } },
      (c) => c.transport,
      { type: 'sse', url: 'https://example.com/sse', headers: { Authorization: 'Bearer s3cret' } },
    ],
    ['a new path on the same origin keeps the headers', http, { transport: { url: 'https://example.com/v2/mcp' } }, (c) => c.transport, { ...HTTP, url: 'https://example.com/v2/mcp' }],
    [
      'another origin with the headers given again',
      http,
      { transport: { url: 'https://other.example/mcp', headers: { Authorization: 'Bearer other' } } },
      (c) => c.transport,
      { ...HTTP, url: 'https://other.example/mcp', headers: { Authorization: 'Bearer other' } },
    ],
    ['another origin with headers {}', http, { transport: { url: 'https://other.example/mcp', headers: {} } }, (c) => c.transport, { ...HTTP, url: 'https://other.example/mcp', headers: {} }],
    [
      'a masked argument sent back keeps the stored one',
      valid({ name: 'gh', transport: { ...STDIO, args: ['serve', '--token=ghp_abcdefghijklmnopqrstuvwxyz012345'] } }),
      { transport: { args: ['serve', '--verbose', `--token=${REDACTED}`] } },
      (c) => c.transport.type === 'stdio' && c.transport.args,
      ['serve', '--verbose', '--token=ghp_abcdefghijklmnopqrstuvwxyz012345'],
    ],
    ['the same name is allowed', http, { name: 'web' }, (c) => c.name, 'web'],
    ['an empty patch changes nothing', http, {}, (c) => c, http],
  ];
  for (const [label, existing, patch, pick, expected] of cases) {
    const result = applyServerPatch(existing, patch);
    if (result.ok) t.same(pick(result.value), expected, label);
    else t.fail(`${label}: ${result.error.message}`);
  }

  const refused: [string, ServerConfig, unknown, string[]][] = [
    ['not an object', stdio, null, ['(root)']],
    ['a new name', stdio, { name: 'other' }, ['name']],
    ['an unknown field', stdio, { color: 'red' }, ['color']],
    ['a bad merged value', stdio, { transport: { command: '' }, timeouts: { connect_ms: 0 } }, ['transport.command', 'timeouts.connect_ms']],
    ['a redacted value with nothing stored', stdio, { transport: { env: { NEW: REDACTED } } }, ['transport.env.NEW']],
    ['a new type without its fields', stdio, { transport: { type: 'sse' } }, ['transport.url']],
    ['name and another problem together', http, { name: 'x', enabled: 'no' }, ['name', 'enabled']],
    ['another origin keeping the stored headers', http, { transport: { url: 'https://attacker.example/mcp' } }, ['transport.headers']],
    ['another port is another origin', http, { transport: { url: 'https://example.com:8443/mcp' } }, ['transport.headers']],
    ['another origin with a redacted header', http, { transport: { type: 'sse', url: 'https://e.com/sse', headers: { Authorization: REDACTED } } }, ['transport.headers.Authorization']],
    ['a masked argument matching no stored one', stdio, { transport: { args: [`--token=${REDACTED}`] } }, ['transport.args[0]']],
  ];
  for (const [label, existing, patch, expectedFields] of refused) {
    const result = applyServerPatch(existing, patch);
    t.match(result, { ok: false, error: { code: 'CONFIG_INVALID' } }, label);
    t.same(fields(result), expectedFields, `${label}: fields`);
  }
});

t.test('applyServerPatch: the OAuth client is not carried to another origin, by the same rule as headers', async (t) => {
  const OAUTH = { client_id: 'coffer', client_secret: 'oauth-s3cret', grant_type: 'client_credentials' };
  const stored = valid({ name: 'reports', transport: { type: 'http', url: 'https://example.com/mcp', headers: {}, oauth: OAUTH } });
  const shown = redactConfig(stored).transport;
  const oauthOf = (c: ServerConfig) => c.transport.type !== 'stdio' && c.transport.oauth;
  const accepted: [string, unknown, unknown][] = [
    ['a new path on the same origin keeps it', { transport: { url: 'https://example.com/v2/mcp' } }, OAUTH],
    ['sent back redacted on the same origin: the stored values', { transport: { url: 'https://example.com/v2/mcp', oauth: shown.type !== 'stdio' && shown.oauth } }, OAUTH],
    ['another origin with the client given again', { transport: { url: 'https://other.example/mcp', oauth: { client_id: 'other', client_secret: 'other-secret' } } }, { client_id: 'other', client_secret: 'other-secret' }],
    ['another origin with oauth {}', { transport: { url: 'https://other.example/mcp', oauth: {} } }, {}],
  ];
  for (const [label, patch, expected] of accepted) {
    const result = applyServerPatch(stored, patch);
    if (result.ok) t.same(oauthOf(result.value), expected, label);
    else t.fail(`${label}: ${result.error.message}`);
  }
  const refused: [string, ServerConfig, unknown, string[]][] = [
    ['another origin, only the URL', stored, { transport: { url: 'https://attacker.example/mcp' } }, ['transport.oauth']],
    ['another origin, headers {} and oauth not mentioned', stored, { transport: { url: 'https://attacker.example/mcp', headers: {} } }, ['transport.oauth']],
    ['another origin, oauth sent back as shown', stored, { transport: { url: 'https://attacker.example/mcp', oauth: shown.type !== 'stdio' && shown.oauth } }, ['transport.oauth.client_id', 'transport.oauth.client_secret', 'transport.oauth.grant_type']],
    ['another origin, one value redacted', stored, { transport: { url: 'https://attacker.example/mcp', oauth: { client_id: 'coffer', client_secret: REDACTED } } }, ['transport.oauth.client_secret']],
    [
      'another origin with headers and a client stored: both',
      valid({ name: 'web', transport: { ...HTTP, oauth: OAUTH } }),
      { transport: { url: 'https://attacker.example/mcp' } },
      ['transport.headers', 'transport.oauth'],
    ],
  ];
  for (const [label, existing, patch, expectedFields] of refused) {
    const result = applyServerPatch(existing, patch);
    t.match(result, { ok: false, error: { code: 'CONFIG_INVALID' } }, label);
    t.same(fields(result), expectedFields, `${label}: fields`);
    t.notOk(JSON.stringify(result).includes('oauth-s3cret'), `${label}: no secret in the answer`);
  }
  const onlyUrl = applyServerPatch(stored, { transport: { url: 'https://attacker.example/mcp' } });
  t.match(!onlyUrl.ok && onlyUrl.error.details, { errors: [{ message: /stored OAuth client values \(client_id, client_secret, grant_type\) were given for https:\/\/example\.com and are not sent to https:\/\/attacker\.example unless given again; give them again, or oauth \{\} for none/ }] }, 'the message says what to do, naming keys only');
});

t.test('redactConfig keeps keys and hides values', async (t) => {
  const stdio = valid({ name: 'files', transport: STDIO });
  const http = valid({ name: 'web', transport: HTTP });
  t.same(redactConfig(stdio).transport, { ...STDIO, env: { API_KEY: REDACTED } });
  t.same(redactConfig(http).transport, { ...HTTP, headers: { Authorization: REDACTED } });
  t.same(stdio.transport, STDIO, 'the input is not modified');
  t.same({ ...redactConfig(http), transport: null }, { ...http, transport: null }, 'everything else unchanged');
});

t.test('the schema exports as JSON Schema for a config file', async (t) => {
  const schema = serverConfigJsonSchema() as {
    required: string[];
    additionalProperties: boolean;
    properties: { transport: { oneOf: { properties: { type: { const: string } } }[] }; timeouts: { properties: Record<string, { maximum: number }> }; session_mode: { enum: string[] } };
  };
  t.same(schema.required, ['name', 'transport'], 'everything else has a default');
  t.equal(schema.additionalProperties, false, 'unknown fields are refused');
  t.same(schema.properties.transport.oneOf.map((option) => option.properties.type.const), ['stdio', 'http', 'sse']);
  t.equal(schema.properties.timeouts.properties.list_deadline_ms!.maximum, 60_000);
  t.same(schema.properties.session_mode.enum, ['shared', 'per_session']);
});

t.test('every secret key is kept as its own property, whatever its name', async (t) => {
  const env = JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, string>;
  const parsed = valid({ name: 'files', transport: { ...STDIO, env } });
  t.same(parsed.transport.type === 'stdio' && Object.entries(parsed.transport.env), [['__proto__', 'x'], ['constructor', 'y']]);
});
