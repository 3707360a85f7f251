// Upstream instructions in coffer's initialize answer: cleaned, bounded per
// server and in total, one section per namespace in a stable order.
import t from 'tap';
import { aggregateInstructions, cleanInstructions, INSTRUCTIONS_MAX_CHARS, SECTION_MAX_CHARS } from '../src/protocol/instructions.js';

t.test('cleanInstructions: control characters go, tab and newline stay, the text is bounded', async (t) => {
  const long = 'x'.repeat(SECTION_MAX_CHARS + 1);
  const emoji = 'a' + '😀'.repeat(SECTION_MAX_CHARS); // a cut at any even offset would split a pair
  const cases: Array<[string, unknown, string | null]> = [
    ['no instructions', undefined, null],
    ['not a string', { text: 'x' }, null],
    ['empty', '', null],
    ['only controls and blanks', '\u0000\u001b \n', null],
    ['plain text unchanged', 'Use the echo tool.\n\n- a\tb', 'Use the echo tool.\n\n- a\tb'],
    ['ANSI escape, NUL, DEL, C1 and CR removed', 'red\u001b[31mtext\u0000\u007f\u0085\r\nnext', 'red[31mtext\nnext'],
    ['surrounding blanks trimmed', '  hi  \n', 'hi'],
    ['exactly the bound: whole', 'y'.repeat(SECTION_MAX_CHARS), 'y'.repeat(SECTION_MAX_CHARS)],
  ];
  for (const [name, raw, expected] of cases) t.equal(cleanInstructions(raw), expected, name);
  const cut = cleanInstructions(long)!;
  t.equal(cut.length, SECTION_MAX_CHARS, 'one over the bound: cut to the bound');
  t.match(cut, /\n\[truncated by coffer\]$/, 'and says so');
  const pairs = cleanInstructions(emoji)!;
  t.ok(pairs.length <= SECTION_MAX_CHARS, 'surrogate pairs: within the bound');
  t.notOk(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(pairs), 'no half surrogate pair left at the cut');
});

t.test('aggregateInstructions: coffer first, then one section per namespace in name order', async (t) => {
  t.equal(aggregateInstructions('own.', []), 'own.', 'no upstream with instructions: coffer\'s sentence only');
  const answer = aggregateInstructions('own.', [
    { server: 'zeta', namespace: 'z', text: 'Z text' },
    { server: 'alpha', namespace: 'al', text: 'A text' },
    { server: 'plain', namespace: '', text: 'P text' },
  ]);
  t.equal(answer, 'own.\n\n## al\n\nA text\n\n## plain (names not prefixed)\n\nP text\n\n## z\n\nZ text');
  const reversed = aggregateInstructions('own.', [
    { server: 'plain', namespace: '', text: 'P text' },
    { server: 'alpha', namespace: 'al', text: 'A text' },
    { server: 'zeta', namespace: 'z', text: 'Z text' },
  ]);
  t.equal(reversed, answer, 'the order the servers come in does not matter');
});

t.test('aggregateInstructions: the whole stays under its bound and says what it left out', async (t) => {
  const full = 'w'.repeat(SECTION_MAX_CHARS);
  const many = Array.from({ length: 20 }, (_, index) => ({ server: `s${String(index).padStart(2, '0')}`, namespace: `s${String(index).padStart(2, '0')}`, text: full }));
  const answer = aggregateInstructions('own.', many);
  t.ok(answer.length <= INSTRUCTIONS_MAX_CHARS, `${answer.length} characters`);
  const kept = answer.match(/^## s\d\d$/gm) ?? [];
  t.ok(kept.length >= 7, `${kept.length} whole sections kept`);
  t.same(kept, many.slice(0, kept.length).map(({ namespace }) => `## ${namespace}`), 'the first ones in order, none skipped');
  t.match(answer, new RegExp(`\\[coffer left out the instructions of ${20 - kept.length} more servers \\(from s${String(kept.length).padStart(2, '0')} on\\) to stay under ${INSTRUCTIONS_MAX_CHARS} characters\\]$`));
});
