// A result already written as JSON. A warm list page is the same bytes for
// every caller of one view until the list changes, and JSON.stringify of its
// tools was most of the main thread's work per tools/list: the page is
// written once per list (page-text.ts) and spliced into each answer by the
// exchange that sends it (post-exchange.ts).

export class JsonText {
  /** A message carries it where its result goes (a result is an object with any keys). */
  [key: string]: unknown;

  constructor(readonly text: string) {}

  /** A serialiser that does not know this type (the SDK transport's own answers) still writes the same JSON. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** What a request is answered with: a result object, or one already written as JSON. */
export type Answer = Record<string, unknown> | JsonText;
