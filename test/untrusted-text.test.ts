// The pure text guards: clipping, escaping of control characters, and the
// size-rotated log file (its renames on a real temporary folder).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { clipText, escapeControls, MAX_ERROR_TEXT_CHARS, quotedText, sanitiseText } from '../src/protocol/untrusted-text.js';
import { appendRotating, DEFAULT_ROTATION, RotatingFile, rotateFiles, rotationFromEnv } from '../src/rotating-file.js';
import { tempDir } from './helpers/cli.js';

t.test('escapeControls makes C0, DEL and C1 controls visible, keeps lines unless asked', async (t) => {
  t.equal(escapeControls('plain text, ünïcode, 💾'), 'plain text, ünïcode, 💾');
  t.equal(escapeControls('\x1b]0;pwned\x07title'), '\\x1b]0;pwned\\x07title');
  t.equal(escapeControls('\x1b[2J'), '\\x1b[2J');
  t.equal(escapeControls('\x9b2J and \x9d52;c;ZXZpbA==\x9c'), '\\x9b2J and \\x9d52;c;ZXZpbA==\\x9c');
  t.equal(escapeControls('a\x00b\x7fc\rd'), 'a\\x00b\\x7fc\\x0dd');
  t.equal(escapeControls('a\x0bb\x0cc'), 'a\\x0bb\\x0cc', 'vertical tab and form feed are no line breaks to keep');
  t.equal(escapeControls('line 1\n\tline 2'), 'line 1\n\tline 2');
  t.equal(escapeControls('line 1\n\tline 2', { lines: true }), 'line 1\\x0a\\x09line 2');
  t.equal(escapeControls('file\u202egnp.exe and \u2066x\u2069 \u200f\u061c'), 'file\\u202egnp.exe and \\u2066x\\u2069 \\u200f\\u061c', 'bidi marks too, as \\uNNNN');
  t.equal(escapeControls('عربي and עברית'), 'عربي and עברית', 'right-to-left text itself is kept');
  // The global pattern's state never leaks from one call to the next.
  t.equal(escapeControls('\x1bx'), '\\x1bx');
  t.equal(escapeControls('\x1bx'), '\\x1bx');
});

t.test('clipText bounds the length, says how much went, never splits a surrogate pair', async (t) => {
  t.equal(clipText('short', 10), 'short');
  t.equal(clipText('0123456789', 10), '0123456789');
  t.equal(clipText('0123456789abc', 10), '0123456789… [3 more chars]');
  t.equal(clipText('abc💾def', 4), 'abc… [5 more chars]', 'the pair is left out whole');
  const big = 'x'.repeat(3 * 1024 * 1024);
  t.ok(clipText(big).length < MAX_ERROR_TEXT_CHARS + 40);
});

t.test('sanitiseText: clipped first, then one line with every control escaped', async (t) => {
  t.equal(sanitiseText('HTTP 500:\n\x1b[31mboom\x1b[0m'), 'HTTP 500:\\x0a\\x1b[31mboom\\x1b[0m');
  t.equal(sanitiseText('a\x7fb\x9bc\u202ed'), 'a\\x7fb\\x9bc\\u202ed', 'DEL, C1 controls and bidi marks as in escapeControls');
  const body = '\x1b[2J'.repeat(1024 * 1024);
  const clean = sanitiseText(body);
  t.ok(clean.length < 5 * MAX_ERROR_TEXT_CHARS, `3 MB of escapes became ${clean.length} chars`);
  t.notOk(/[\x00-\x1f\x7f-\x9f]/.test(clean));
});

t.test('rotation policy from the environment, defaults otherwise', async (t) => {
  t.same(rotationFromEnv({}), DEFAULT_ROTATION);
  t.same(rotationFromEnv({ COFFER_LOG_MAX_BYTES: '2048', COFFER_LOG_KEEP: '0' }), { maxBytes: 2048, keep: 0 });
  t.same(rotationFromEnv({ COFFER_LOG_MAX_BYTES: '1e3x', COFFER_LOG_KEEP: '-1' }), DEFAULT_ROTATION);
});

t.test('rotateFiles shifts generations and drops the oldest', async (t) => {
  const dir = tempDir('coffer-rotate-');
  const log = join(dir, 'a.log');
  for (const [file, text] of [[log, 'live'], [`${log}.1`, 'one'], [`${log}.2`, 'two']]) writeFileSync(file!, text!);
  rotateFiles(log, 2);
  t.notOk(existsSync(log));
  t.equal(readFileSync(`${log}.1`, 'utf8'), 'live');
  t.equal(readFileSync(`${log}.2`, 'utf8'), 'one');
  t.notOk(existsSync(`${log}.3`));
  writeFileSync(log, 'x');
  rotateFiles(log, 0);
  t.notOk(existsSync(log), 'keep 0: the file just goes');
});

t.test('RotatingFile keeps each file under maxBytes and at most keep old ones', async (t) => {
  const dir = tempDir('coffer-rotating-');
  const path = join(dir, 'sub', 'x.log');
  const file = new RotatingFile(path, { maxBytes: 1000, keep: 2 });
  const line = `${'y'.repeat(99)}\n`;
  for (let i = 0; i < 100; i++) file.write(line);
  await new Promise((resolve) => file.end(resolve));
  t.same(readdirSync(join(dir, 'sub')).sort(), ['x.log', 'x.log.1', 'x.log.2']);
  for (const name of ['x.log', 'x.log.1', 'x.log.2']) t.ok(statSync(join(dir, 'sub', name)).size <= 1000, `${name} within the cap`);
  t.equal(statSync(join(dir, 'sub', 'x.log')).mode & 0o777, 0o600);
  const reopened = new RotatingFile(path, { maxBytes: 1000, keep: 2 });
  reopened.write('z'.repeat(500));
  await new Promise((resolve) => reopened.end(resolve));
  t.ok(statSync(path).size <= 1000, 'a reopened file counts what it already holds');
});

t.test('appendRotating rotates a file several processes append to by name', async (t) => {
  const path = join(tempDir('coffer-append-'), 'shim.log');
  for (let i = 0; i < 50; i++) appendRotating(path, `${'s'.repeat(99)}\n`, { maxBytes: 1000, keep: 1 });
  t.ok(statSync(path).size <= 1000);
  t.ok(statSync(`${path}.1`).size <= 1000);
  t.notOk(existsSync(`${path}.2`));
});

t.test("quotedText: a sender's text inside a message is clipped, on one line, its controls escaped, between quotes", async (t) => {
  t.equal(quotedText('plain'), '"plain"');
  t.equal(quotedText('a\nb\u001b[2J\u202e'), '"a\\x0ab\\x1b[2J\\u202e"', 'line feed, escape and bidi mark made visible');
  t.match(quotedText('x'.repeat(300), 10), /^"x{10}… \[290 more chars\]"$/, 'cut at its bound, saying how much went');
  t.equal(quotedText('y'.repeat(MAX_ERROR_TEXT_CHARS + 1)).length, MAX_ERROR_TEXT_CHARS + '"… [1 more chars]"'.length, 'bounded by default like any error text');
});
