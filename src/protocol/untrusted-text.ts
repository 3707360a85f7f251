// Text coffer did not write (an upstream's error body, a child's stderr, a
// client's tool name) on its way into a log line, a last_error, an event or a
// terminal: bounded in length and with its control characters made visible, so
// it can neither fill the disk nor drive the terminal that later shows it.

/** How much of one upstream-supplied text an error, a log line or an event keeps, in UTF-16 code units. */
export const MAX_ERROR_TEXT_CHARS = 2_048;

/**
 * C0 controls, DEL and C1 controls, and the bidirectional formatting marks
 * (an upstream's name could otherwise show reordered: "Trojan Source"); tab
 * and line feed are kept unless escaping them too.
 */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const CONTROLS_AND_LINES = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const visible = (char: string): string => {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * Each control character as `\xNN` text (ESC → `\x1b`; a bidi mark `\uNNNN`), so the text can be
 * printed to a terminal or appended to a log as is. `lines: false` keeps tab
 * and line feed (multi-line messages); `true` escapes them too (one table cell).
 */
export function escapeControls(text: string, options: { lines?: boolean } = {}): string {
  const pattern = options.lines ? CONTROLS_AND_LINES : CONTROLS;
  pattern.lastIndex = 0;
  return pattern.test(text) ? text.replace(pattern, visible) : text;
}

/** At most `max` code units of `text`, never ending inside a surrogate pair; a cut says how much went. */
export function clipText(text: string, max = MAX_ERROR_TEXT_CHARS): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  const end = high >= 0xd800 && high <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}… [${text.length - end} more chars]`;
}

/** Clipped, then one line with its controls escaped: for last_error, events and log fields. */
export function sanitiseText(text: string, max = MAX_ERROR_TEXT_CHARS): string {
  return escapeControls(clipText(text, max), { lines: true });
}

/** Quoted inside a message: clipped to `max`, one line, its controls escaped (what a sender wrote cannot rewrite what the message says). */
export function quotedText(text: string, max = MAX_ERROR_TEXT_CHARS): string {
  return `"${sanitiseText(text, max)}"`;
}
