// Upstream instructions as coffer passes them on in its initialize answer:
// each server's text without control characters and bounded (the actor does
// this before the text crosses to the main thread), then coffer's own
// sentence and one section per namespace, in namespace order, the whole
// bounded. Pure.

/**
 * Per server. Instructions are a usage hint for the client's model:
 * server-everything, a demo of every feature, sends about 1.6 K characters;
 * one verbose server must not crowd out the others.
 */
export const SECTION_MAX_CHARS = 4_096;
/** The whole answer: a client puts it into its model's context at every session start (this is about 8 K tokens). */
export const INSTRUCTIONS_MAX_CHARS = 32_768;

const TRUNCATED = '\n[truncated by coffer]';
/** Room kept for the closing note that says how many sections were left out. */
const OMITTED_NOTE_MAX = 256;
// C0 and C1 controls and DEL, except tab and newline: the text is read by a model and shown in terminals and UIs.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

/** At most `max` UTF-16 units, never half a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** An upstream's `instructions` as coffer keeps them: no control characters, at most SECTION_MAX_CHARS; null if none. */
export function cleanInstructions(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const text = raw.replace(CONTROL, '').trim();
  if (text === '') return null;
  return text.length <= SECTION_MAX_CHARS ? text : cut(text, SECTION_MAX_CHARS - TRUNCATED.length) + TRUNCATED;
}

export interface UpstreamInstructions {
  server: string;
  /** "" for a server whose names are not prefixed. */
  namespace: string;
  /** Already cleaned (cleanInstructions). */
  text: string;
}

/** The section heading: the namespace clients see in the names, or the server name when names are unprefixed. */
function headingOf({ server, namespace }: UpstreamInstructions): string {
  return namespace === '' ? `${server} (names not prefixed)` : namespace;
}

/** coffer's sentence, then `## <namespace>` and its server's text per upstream, until INSTRUCTIONS_MAX_CHARS. */
export function aggregateInstructions(own: string, upstreams: UpstreamInstructions[]): string {
  const sections = upstreams.map((upstream) => ({ heading: headingOf(upstream), text: upstream.text })).sort((a, b) => (a.heading < b.heading ? -1 : a.heading > b.heading ? 1 : 0));
  let answer = own;
  for (const [index, { heading, text }] of sections.entries()) {
    const section = `\n\n## ${heading}\n\n${text}`;
    if (answer.length + section.length > INSTRUCTIONS_MAX_CHARS - OMITTED_NOTE_MAX) {
      const left = sections.length - index;
      return `${answer}\n\n[coffer left out the instructions of ${left} more server${left === 1 ? '' : 's'} (from ${heading} on) to stay under ${INSTRUCTIONS_MAX_CHARS} characters]`;
    }
    answer += section;
  }
  return answer;
}
