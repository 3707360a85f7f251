// A small top-k BM25 scorer over documents of weighted fields. Terms come in
// already processed (the caller tokenizes, stems and adds synonyms), so this
// module only ranks. A search adds each query term's postings into one score
// array and keeps the best k in a bounded min-heap: nothing is allocated per
// matching document, which is what keeps a search over many thousands of
// documents, most of them matching some query term, within a few milliseconds.

export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** How much a field's length (against its average) discounts a match. */
  b: number;
  /** A floor added to every match (BM25+), so a long field still counts. */
  delta: number;
}

export interface Ranked {
  id: string;
  score: number;
}

/** A document's terms per field, repeats kept (they are its term frequencies). */
export type FieldTerms<F extends string> = Record<F, readonly string[]>;

/** Postings of one term in one field: slot, term frequency, slot, term frequency, … */
type Postings = number[];

export class Bm25<F extends string> {
  private readonly fields: readonly F[];
  private readonly weights: Float64Array;
  /** Term → its id and back; a term leaves when no document holds it any more. */
  private readonly termIds = new Map<string, number>();
  private readonly termNames: string[] = [];
  private readonly freeTermIds: number[] = [];
  /** Per field, per term id, that term's postings. */
  private readonly postings: Postings[][];
  /** Per slot, the document's id (undefined: a free slot). */
  private readonly ids: (string | undefined)[] = [];
  private readonly slotOf = new Map<string, number>();
  private readonly freeSlots: number[] = [];
  /**
   * Per slot, for each term of the document: its id, then per field where the
   * document stands in that term's postings (-1: not in that field), so a
   * removal goes straight to its own postings.
   */
  private readonly placesOf: Int32Array[] = [];
  /** Per field, per slot, the field's length in terms; and the sum over documents. */
  private readonly lengths: number[][];
  private readonly totalLength: Float64Array;
  /** Per-search scratch, one entry per slot, grown with the slots and zeroed after each search. */
  private scores = new Float64Array(0);
  private matched = new Int32Array(0);
  /** Per slot, the last query term (1-based) that counted towards `matched`. */
  private lastTerm = new Int32Array(0);
  private touched = new Int32Array(0);

  constructor(
    weights: Readonly<Record<F, number>>,
    private readonly params: Bm25Params,
  ) {
    this.fields = Object.keys(weights) as F[];
    this.weights = Float64Array.from(this.fields.map((field) => weights[field]));
    this.postings = this.fields.map(() => []);
    this.lengths = this.fields.map(() => []);
    this.totalLength = new Float64Array(this.fields.length);
  }

  get size(): number {
    return this.slotOf.size;
  }

  /** Adds a document; an id already present is replaced. */
  add(id: string, document: FieldTerms<F>): void {
    this.remove([id]);
    const slot = this.freeSlots.pop() ?? this.ids.length;
    this.ids[slot] = id;
    this.slotOf.set(id, slot);
    this.grow(this.ids.length);
    const rows = new Map<number, number>();
    const places: number[] = [];
    this.fields.forEach((field, f) => {
      const counts = new Map<number, number>();
      for (const term of document[field]) {
        const termId = this.termIdOf(term);
        counts.set(termId, (counts.get(termId) ?? 0) + 1);
      }
      for (const [termId, count] of counts) {
        let row = rows.get(termId);
        if (row === undefined) {
          row = places.length;
          rows.set(termId, row);
          places.push(termId, ...this.fields.map(() => -1));
        }
        const list = (this.postings[f]![termId] ??= []);
        places[row + 1 + f] = list.length;
        list.push(slot, count);
      }
      this.lengths[f]![slot] = document[field].length;
      this.totalLength[f] += document[field].length;
    });
    this.placesOf[slot] = Int32Array.from(places);
  }

  /**
   * Removes documents (unknown ids are ignored). Each of a document's postings
   * is swapped with its list's last one and cut off, so a removal costs the
   * document's own terms, however many other documents share them.
   */
  remove(ids: Iterable<string>): void {
    const stride = this.fields.length + 1;
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      const places = this.placesOf[slot]!;
      for (let row = 0; row < places.length; row += stride) {
        const termId = places[row]!;
        let held = false;
        this.postings.forEach((fieldPostings, f) => {
          const list = fieldPostings[termId];
          const at = places[row + 1 + f]!;
          if (list && at >= 0) {
            const last = list.length - 2;
            if (at !== last) {
              list[at] = list[last]!;
              list[at + 1] = list[last + 1]!;
              this.movePlace(list[at]!, termId, f, at);
            }
            list.length = last;
          }
          if (list && list.length > 0) held = true;
        });
        if (!held) this.dropTerm(termId);
      }
      this.fields.forEach((_, f) => {
        this.totalLength[f] -= this.lengths[f]![slot]!;
        this.lengths[f]![slot] = 0;
      });
      this.slotOf.delete(id);
      this.ids[slot] = undefined;
      this.placesOf[slot] = new Int32Array(0);
      this.freeSlots.push(slot);
    }
  }

  /**
   * The best `k` documents that `accept` admits for these query terms (a term
   * given twice counts twice), best first; equal scores in id order, so a
   * ranking never depends on insertion order. A document's summed score is
   * multiplied by how many distinct query terms it matched, so one that meets
   * more of the query outranks one that repeats a single word.
   */
  top(query: readonly string[], k: number, accept: (id: string) => boolean = () => true): Ranked[] {
    const documents = this.size;
    if (k <= 0 || documents === 0) return [];
    const { k1, b, delta } = this.params;
    const { scores, matched, lastTerm, touched } = this;
    let touchedCount = 0;
    let termNumber = 0;
    const weightOf = new Map<number, number>();
    for (const term of query) {
      const termId = this.termIds.get(term);
      if (termId !== undefined) weightOf.set(termId, (weightOf.get(termId) ?? 0) + 1);
    }
    for (const [termId, repeats] of weightOf) {
      termNumber += 1;
      for (let f = 0; f < this.fields.length; f++) {
        const list = this.postings[f]![termId];
        if (!list || list.length === 0) continue;
        const frequency = list.length / 2;
        const idf = Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5));
        const scale = repeats * this.weights[f]! * idf;
        const lengths = this.lengths[f]!;
        const norm = k1 / (this.totalLength[f]! / documents || 1);
        for (let i = 0; i < list.length; i += 2) {
          const slot = list[i]!;
          const tf = list[i + 1]!;
          const score = scale * (delta + (tf * (k1 + 1)) / (tf + k1 * (1 - b) + norm * b * lengths[slot]!));
          if (lastTerm[slot] !== termNumber) {
            if (matched[slot] === 0) touched[touchedCount++] = slot;
            matched[slot] += 1;
            lastTerm[slot] = termNumber;
          }
          scores[slot] += score;
        }
      }
    }
    const heap = new TopK(Math.min(k, documents), this.ids);
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i]!;
      const score = scores[slot]! * matched[slot]!;
      scores[slot] = 0;
      matched[slot] = 0;
      lastTerm[slot] = 0;
      if (heap.admits(slot, score) && accept(this.ids[slot]!)) heap.push(slot, score);
    }
    return heap.drain();
  }

  private termIdOf(term: string): number {
    let termId = this.termIds.get(term);
    if (termId === undefined) {
      termId = this.freeTermIds.pop() ?? this.termNames.length;
      this.termIds.set(term, termId);
      this.termNames[termId] = term;
    }
    return termId;
  }

  /** Records that `slot`'s posting of `termId` in field `f` now stands at `at`. */
  private movePlace(slot: number, termId: number, f: number, at: number): void {
    const places = this.placesOf[slot]!;
    const stride = this.fields.length + 1;
    for (let row = 0; row < places.length; row += stride) {
      if (places[row] === termId) {
        places[row + 1 + f] = at;
        return;
      }
    }
  }

  private dropTerm(termId: number): void {
    this.termIds.delete(this.termNames[termId]!);
    for (const fieldPostings of this.postings) fieldPostings[termId] = [];
    this.freeTermIds.push(termId);
  }

  private grow(slots: number): void {
    if (slots <= this.scores.length) return;
    const capacity = Math.max(64, slots * 2);
    this.scores = new Float64Array(capacity);
    this.matched = new Int32Array(capacity);
    this.lastTerm = new Int32Array(capacity);
    this.touched = new Int32Array(capacity);
  }
}

/** A bounded min-heap of (slot, score): its root is the worst of the best k so far. */
class TopK {
  private readonly slots: Int32Array;
  private readonly scores: Float64Array;
  private count = 0;

  constructor(
    private readonly k: number,
    private readonly ids: readonly (string | undefined)[],
  ) {
    this.slots = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  /** Whether (slot, score) would enter: the heap has room, or it beats the root. */
  admits(slot: number, score: number): boolean {
    return this.count < this.k || this.worse(this.slots[0]!, this.scores[0]!, slot, score);
  }

  push(slot: number, score: number): void {
    if (this.count < this.k) {
      this.slots[this.count] = slot;
      this.scores[this.count] = score;
      this.up(this.count++);
    } else {
      this.slots[0] = slot;
      this.scores[0] = score;
      this.down(0);
    }
  }

  /** Empties the heap, best first. */
  drain(): Ranked[] {
    const out: Ranked[] = new Array(this.count);
    while (this.count > 0) {
      out[this.count - 1] = { id: this.ids[this.slots[0]!]!, score: this.scores[0]! };
      this.count -= 1;
      this.slots[0] = this.slots[this.count]!;
      this.scores[0] = this.scores[this.count]!;
      this.down(0);
    }
    return out;
  }

  /** Lower score is worse; on a tie the later id is worse. */
  private worse(slotA: number, scoreA: number, slotB: number, scoreB: number): boolean {
    return scoreA < scoreB || (scoreA === scoreB && this.ids[slotA]! > this.ids[slotB]!);
  }

  private up(at: number): void {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.worse(this.slots[at]!, this.scores[at]!, this.slots[parent]!, this.scores[parent]!)) return;
      this.swap(at, parent);
      at = parent;
    }
  }

  private down(at: number): void {
    for (;;) {
      let worst = at;
      for (let child = 2 * at + 1; child <= 2 * at + 2; child++) {
        if (child < this.count && this.worse(this.slots[child]!, this.scores[child]!, this.slots[worst]!, this.scores[worst]!)) worst = child;
      }
      if (worst === at) return;
      this.swap(at, worst);
      at = worst;
    }
  }

  private swap(a: number, b: number): void {
    [this.slots[a], this.slots[b]] = [this.slots[b]!, this.slots[a]!];
    [this.scores[a], this.scores[b]] = [this.scores[b]!, this.scores[a]!];
  }
}
