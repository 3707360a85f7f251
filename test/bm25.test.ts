// The top-k BM25 scorer behind tool search: scores follow the BM25 formula
// (rare terms and heavier fields count more), the top k are exactly the best k
// of a full ranking, ties fall in id order, and an index changed by removes and
// adds ranks exactly like one built afresh from what is left.
import fc from 'fast-check';
import t from 'tap';
import { Bm25, type FieldTerms } from '../src/search/bm25.js';

type Field = 'head' | 'body';
const params = { k1: 1.2, b: 0.75, delta: 0.5 };
const doc = (head: string, body = ''): FieldTerms<Field> => ({ head: head.split(' ').filter(Boolean), body: body.split(' ').filter(Boolean) });
const scorer = (weights = { head: 1, body: 1 }): Bm25<Field> => new Bm25<Field>(weights, params);

t.test('a score is BM25+: idf × saturated, length-normalised term frequency × field weight', async (t) => {
  const index = scorer({ head: 2, body: 1 });
  index.add('a', doc('screenshot page', 'x'));
  index.add('b', doc('page', 'x y z'));
  index.add('c', doc('page click', ''));
  const [hit] = index.top(['screenshot'], 1);
  // one of three documents holds "screenshot" once, in a head of 2 terms; heads average 5/3 terms
  const idf = Math.log(1 + (3 - 1 + 0.5) / (1 + 0.5));
  const expected = 2 * idf * (0.5 + (1 * 2.2) / (1 + 1.2 * (1 - 0.75 + (0.75 * 2) / (5 / 3))));
  t.equal(hit?.id, 'a');
  t.ok(Math.abs(hit!.score - expected) < 1e-9, `${hit?.score} ≈ ${expected}`);
});

t.test('a rare term outweighs a common one (idf)', async (t) => {
  const index = scorer();
  index.add('common', doc('file'));
  index.add('rare', doc('geocode'));
  for (let i = 0; i < 5; i++) index.add(`filler${i}`, doc('file other'));
  t.equal(index.top(['file', 'geocode'], 1)[0]?.id, 'rare');
});

t.test('a term in a heavier field ranks its document higher; swapping the weights swaps the order', async (t) => {
  const build = (weights: { head: number; body: number }): string[] => {
    const index = scorer(weights);
    index.add('in-head', doc('deploy', 'other'));
    index.add('in-body', doc('other', 'deploy'));
    return index.top(['deploy'], 2).map((hit) => hit.id);
  };
  t.same(build({ head: 3, body: 1 }), ['in-head', 'in-body']);
  t.same(build({ head: 1, body: 3 }), ['in-body', 'in-head']);
});

t.test('a document meeting more of the query outranks one repeating a single query word', async (t) => {
  const index = scorer();
  index.add('both', doc('create issue'));
  index.add('one', doc('create create create'));
  t.same(index.top(['create', 'issue'], 2).map((hit) => hit.id), ['both', 'one']);
});

t.test('equal scores come in id order whatever the order of insertion', async (t) => {
  for (const order of [['b', 'c', 'a'], ['c', 'a', 'b'], ['a', 'b', 'c']]) {
    const index = scorer();
    for (const id of order) index.add(id, doc('same words'));
    t.same(index.top(['words'], 3).map((hit) => hit.id), ['a', 'b', 'c'], order.join(''));
    t.same(index.top(['words'], 2).map((hit) => hit.id), ['a', 'b'], `${order.join('')}, k below the ties`);
  }
});

t.test('nothing is found for an empty query, unknown terms, k 0 or an empty index', async (t) => {
  const index = scorer();
  t.same(index.top(['file'], 5), [], 'empty index');
  index.add('a', doc('file'));
  t.same(index.top([], 5), []);
  t.same(index.top(['nowhere'], 5), []);
  t.same(index.top(['file'], 0), []);
});

t.test('accept leaves a rejected document out and fills k from the rest', async (t) => {
  const index = scorer();
  index.add('best', doc('file file'));
  index.add('next', doc('file'));
  index.add('last', doc('file other words'));
  t.same(index.top(['file'], 2, (id) => id !== 'best').map((hit) => hit.id), ['next', 'last']);
});

t.test('removing documents takes them and their terms out; adding an id again replaces it', async (t) => {
  const index = scorer();
  index.add('a', doc('screenshot'));
  index.add('b', doc('navigate'));
  index.remove(['a', 'unknown']);
  t.equal(index.size, 1);
  t.same(index.top(['screenshot'], 5), []);
  index.add('b', doc('click'));
  t.equal(index.size, 1);
  t.same(index.top(['navigate'], 5), [], 'the replaced text is gone');
  t.equal(index.top(['click'], 5)[0]?.id, 'b');
});

const vocabulary = ['read', 'write', 'file', 'issue', 'page', 'click', 'user', 'list', 'delete', 'image'];
const document = fc.record({ head: fc.array(fc.constantFrom(...vocabulary), { maxLength: 4 }), body: fc.array(fc.constantFrom(...vocabulary), { maxLength: 12 }) });
const query = fc.array(fc.constantFrom(...vocabulary, 'absent'), { minLength: 1, maxLength: 5 });

t.test('property: the top k are the first k of the full ranking', async (t) => {
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.array(document, { minLength: 1, maxLength: 40 }), query, fc.integer({ min: 1, max: 10 }), (docs, terms, k) => {
        const index = scorer({ head: 3, body: 1 });
        docs.forEach((fields, i) => index.add(`d${String(i).padStart(2, '0')}`, fields));
        const all = index.top(terms, docs.length);
        const sorted = [...all].sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1));
        return JSON.stringify(all) === JSON.stringify(sorted) && JSON.stringify(index.top(terms, k)) === JSON.stringify(all.slice(0, k));
      }),
    ),
  );
});

t.test('property: after any removes and adds, the index ranks like one built from what is left', async (t) => {
  // few ids, so removes hit live documents and re-adds replace them; every word of the vocabulary queried, so every posting list is compared
  const step = fc.oneof(
    fc.record({ add: fc.integer({ min: 0, max: 7 }), fields: document }),
    fc.record({ remove: fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 3 }) }),
  );
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const changed = scorer({ head: 2, body: 1 });
        const live = new Map<string, FieldTerms<Field>>();
        for (const change of steps) {
          if ('add' in change) {
            changed.add(`d${change.add}`, change.fields);
            live.set(`d${change.add}`, change.fields);
          } else {
            changed.remove(change.remove.map((n) => `d${n}`));
            for (const n of change.remove) live.delete(`d${n}`);
          }
        }
        const fresh = scorer({ head: 2, body: 1 });
        for (const [id, fields] of live) fresh.add(id, fields);
        return vocabulary.every((word) => {
          const a = changed.top([word], 8);
          const b = fresh.top([word], 8);
          return changed.size === live.size && a.length === b.length && a.every((hit, i) => hit.id === b[i]!.id && Math.abs(hit.score - b[i]!.score) < 1e-9);
        });
      }),
      { numRuns: 300 },
    ),
  );
});
