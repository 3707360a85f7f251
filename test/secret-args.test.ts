// Which stdio arguments API answers mask: secret-looking ones only, the flag kept.
import t from 'tap';
import { maskArgs, REDACTED, restoreMaskedArgs } from '../src/registry/secret-args.js';
import { redactConfig } from '../src/registry/server-config.js';
import { parseServerConfig } from '../src/registry/server-config.js';

const R = REDACTED;

t.test('secret-looking arguments are masked, the rest shown as given', async (t) => {
  const cases: [string, string[], string[]][] = [
    ['--flag=value with a secret name', ['--token=abc', '--api-key=x1', '--password=hunter2'], [`--token=${R}`, `--api-key=${R}`, `--password=${R}`]],
    ['a value after a secret flag', ['--token', 'abc', '--auth-header', 'Bearer x'], ['--token', R, '--auth-header', R]],
    ['a secret flag followed by another flag', ['--no-auth', '--port', '80'], ['--no-auth', '--port', '80']],
    ['an env-style assignment', ['GITHUB_TOKEN=abc'], [`GITHUB_TOKEN=${R}`]],
    ['a header line', ['Authorization: Bearer abc'], [`Authorization: ${R}`]],
    ['known token formats', ['ghp_0123456789abcdefABCDEF', 'sk-proj-abcdefgh1234', 'xoxb-1234-abcdefgh'], [R, R, R]],
    ['a token as the value of an innocent flag', ['--key-id=AKIAIOSFODNN7EXAMPLE1'], [`--key-id=${R}`]],
    ['a long random string', ['q8Zr2LmX0vTn5YwKpA7cJd3HsF9gBe1U'], [R]],
    ['a URL password, wherever the URL is', ['postgresql://app:hunter2@db.internal/prod', '--db-url=postgresql://a:pw@h/d', 'mysql://root:p%40ss@127.0.0.1:3306'], [`postgresql://app:${R}@db.internal/prod`, `--db-url=postgresql://a:${R}@h/d`, `mysql://root:${R}@127.0.0.1:3306`]],
    ['secret query values', ['https://x.example/mcp?access_token=abc&region=eu', 'https://x.example/sse?key=q8Zr2LmX0vTn5YwKpA7cJd3HsF9gBe1U'], [`https://x.example/mcp?access_token=${R}&region=eu`, `https://x.example/sse?key=${R}`]],
    ['a URL with a user but no password, and plain query values', ['ssh://git@github.com/org/repo', 'https://x.example/a?page=2&q=files'], ['ssh://git@github.com/org/repo', 'https://x.example/a?page=2&q=files']],
    [
      'ordinary arguments',
      ['-y', '@modelcontextprotocol/server-filesystem', '/home/user/projects/some-long-directory-name', 'https://example.com/mcp', '--port=8080', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1'],
      ['-y', '@modelcontextprotocol/server-filesystem', '/home/user/projects/some-long-directory-name', 'https://example.com/mcp', '--port=8080', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1'],
    ],
  ];
  for (const [label, args, expected] of cases) t.same(maskArgs(args), expected, label);
});

t.test('a masked argument sent back is restored once, by its mask', async (t) => {
  const stored = ['--token=one', '--token=two', 'plain'];
  t.same(restoreMaskedArgs([`--token=${R}`, `--token=${R}`, 'plain'], stored), stored, 'each stored value used once, in order');
  t.same(restoreMaskedArgs([`--token=${R}`, `--token=${R}`, `--token=${R}`], stored), ['--token=one', '--token=two', `--token=${R}`], 'a third has nothing left to match');
  t.same(restoreMaskedArgs([R], stored), [R], 'a mask no stored argument has');
  const url = ['postgresql://app:hunter2@db/prod'];
  t.same(restoreMaskedArgs(maskArgs(url), url), url, 'a masked URL password too');
});

t.test('API view masks, the audit view hides every argument', async (t) => {
  const parsed = parseServerConfig({ name: 'gh', transport: { type: 'stdio', command: 'gh-mcp', args: ['serve', '--token=abc'] } });
  if (!parsed.ok) throw new Error(parsed.error.message);
  t.same((redactConfig(parsed.value).transport as { args: string[] }).args, ['serve', `--token=${R}`]);
  t.same((redactConfig(parsed.value, { allArgs: true }).transport as { args: string[] }).args, [R, R]);
});
