// Command-line arguments of a stdio upstream that look like secrets (`--token=…`,
// `--api-key VALUE`, `ghp_…`, long random strings, a URL's password or secret
// query value). They are sealed at rest like
// every argument; these rules decide which ones API answers mask, and warn about:
// a child's command line is readable by every user of the machine (ps, /proc).

/** What a secret value (env, header, a secret-looking argument) reads as in audit entries and API answers. */
export const REDACTED = '[redacted]';

/** A flag, variable or header name that announces a secret value. */
const SECRET_NAME = /token|secret|passw(or)?d|pwd|api[-_]?key|apikey|auth|credential|private[-_]?key|access[-_]?key|bearer/i;
/** Well-known token formats: GitHub, OpenAI/Stripe, Slack, GitLab, AWS, Google, JWT. */
const TOKEN_FORMAT = /^(gh[pousr]_|github_pat_|sk-|sk_live_|rk_live_|xox[abposr]-|glpat-|AKIA|AIza|eyJ)[A-Za-z0-9_\-.=+/]{8,}$/;
const RANDOM_CHARSET = /^[A-Za-z0-9+/_=-]{32,}$/;
const MIN_ENTROPY_BITS_PER_CHAR = 3.5;
/** `--name=value`, `-n=value`, `NAME=value`. */
const ASSIGNMENT = /^(-{0,2}[A-Za-z0-9_.-]+)=(.+)$/s;
/** `Authorization: Bearer …` as one argument (a header passed on the command line). */
const HEADER_LINE = /^([A-Za-z0-9-]+):\s*(.+)$/s;
const FLAG = /^-{1,2}([A-Za-z0-9_.-]+)$/;
/** The password of a URL's userinfo (`postgresql://app:PASSWORD@host/db`), wherever the URL sits in an argument. */
const URL_PASSWORD = /([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s:@/?#]*:)([^\s@/?#]+)(?=@)/g;
/** A query parameter (`?access_token=VALUE`, `&key=VALUE`): masked when its name or value reads as a secret. */
const QUERY_PARAM = /([?&;]([^=&#\s]+)=)([^&#\s]+)/g;

function entropyBitsPerChar(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) bits -= (count / text.length) * Math.log2(count / text.length);
  return bits;
}

function looksLikeToken(value: string): boolean {
  if (TOKEN_FORMAT.test(value)) return true;
  return RANDOM_CHARSET.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value) && entropyBitsPerChar(value) >= MIN_ENTROPY_BITS_PER_CHAR;
}

/** The argument as API answers show it: its secret part replaced by "[redacted]", or unchanged. */
function maskArg(arg: string, previous: string | undefined): string {
  const flag = previous === undefined ? null : FLAG.exec(previous);
  if (flag && SECRET_NAME.test(flag[1]!) && !arg.startsWith('-')) return REDACTED;
  const pair = ASSIGNMENT.exec(arg) ?? HEADER_LINE.exec(arg);
  if (pair && (SECRET_NAME.test(pair[1]!) || looksLikeToken(pair[2]!))) return arg.slice(0, arg.length - pair[2]!.length) + REDACTED;
  return looksLikeToken(arg) ? REDACTED : maskInUrls(arg);
}

/** A URL's password and its secret-looking query values, wherever URLs sit in the argument (`--db=postgresql://a:pw@h/d`). */
function maskInUrls(arg: string): string {
  if (!arg.includes('://') && !/[?&;]/.test(arg)) return arg;
  return arg
    .replace(URL_PASSWORD, (_match, head: string) => head + REDACTED)
    .replace(QUERY_PARAM, (match, head: string, name: string, value: string) => (SECRET_NAME.test(name) || looksLikeToken(value) ? head + REDACTED : match));
}

export function maskArgs(args: readonly string[]): string[] {
  return args.map((arg, index) => maskArg(arg, args[index - 1]));
}

/**
 * Args from a patch, each masked one that reads exactly as a stored argument's
 * mask (a config read back from the API and sent again) turned back into the stored value.
 */
export function restoreMaskedArgs(patched: unknown, stored: readonly string[]): unknown {
  if (!Array.isArray(patched)) return patched;
  const masks = maskArgs(stored);
  const used = new Set<number>();
  return patched.map((arg: unknown) => {
    if (typeof arg !== 'string' || !arg.includes(REDACTED)) return arg;
    const index = masks.findIndex((mask, at) => !used.has(at) && mask === arg && mask !== stored[at]);
    if (index === -1) return arg;
    used.add(index);
    return stored[index];
  });
}
