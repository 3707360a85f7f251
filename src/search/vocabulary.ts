// How tool text and a user's words become search terms: identifiers split at
// case changes, digits and punctuation (`browser_take_screenshot`,
// `createPullRequest`), words stemmed (Porter), stop words dropped, and a
// tool's name widened with the words users say for it ("remove" finds
// `delete_file`, "ticket" finds `create_issue`). Pure.
import { stemmer } from 'stemmer';

const STOP = new Set(
  'a an and are as at be by can could do does for from get give how i if in into is it its me my of on or please should that the their them then there these this to up use using want was we what when where which will with would you your'.split(' '),
);

/**
 * Groups of words that mean the same to someone asking for a tool. A word of
 * a tool's name brings its group into the tool's "aka" field, weighted below
 * the name itself, so a tool named with the user's own word still ranks first.
 */
const GROUPS = [
  'delete remove erase drop destroy discard trash purge forget',
  'create make new add generate start open init',
  'find search lookup look query locate seek discover',
  'list enumerate show all browse index catalog',
  'read view get fetch retrieve load open show display cat see',
  'write save store put persist record',
  'edit modify change update alter patch replace rewrite',
  'move rename relocate mv',
  'copy duplicate clone',
  'file files document doc disk',
  'folder directory dir',
  'page website site url web link',
  'navigate go visit browse open goto',
  'click press tap select',
  'type fill enter input',
  'screenshot capture snapshot picture image grab looks',
  'issue ticket bug task',
  'pull merge request pr mr',
  'repository repo project',
  'comment reply note',
  'message chat post send tell say notify announce',
  'channel room conversation',
  'user member person people account',
  'run execute invoke call launch',
  'sql query database db table rows row select count',
  'key value cache',
  'branch ref',
  'commit change',
  'close shut end finish',
  'wait sleep pause delay',
  'log logs event events trace',
  'error errors issue exception crash failure',
  'payment charge invoice bill',
  'customer client buyer',
  'refund reimburse return',
  'subscription plan',
  'pod pods container deployment',
  'scrape crawl extract',
  'map maps location place address',
  'direction directions route drive driving travel',
  'distance far',
  'geocode coordinate coordinates latitude longitude',
  'entity entities node remember',
  'relation relations relationship link edge',
  'observation fact remember memorize',
  'think thought reason reasoning step',
  'tab tabs window',
  'console log',
  'network request requests api xhr calls',
  'performance speed slow trace',
  'hover mouse',
  'drag drop',
  'keyboard key press hit enter keystroke',
  'upload attach',
  'download save',
  'sum add addition plus',
  'echo repeat',
  'env environment variable',
  'media image picture photo png jpg jpeg audio',
  'size sizes space big large bytes',
  'elevation altitude height high sea level',
  'detail details info information hours reviews rating',
  'whoami who identity logged current me',
  'map sitemap urls links',
];

/** A stem → the words of every group it is in, as written (the index stems them like any text). */
const synonyms = new Map<string, Set<string>>();
for (const group of GROUPS) {
  const members = group.split(' ');
  for (const member of members) {
    const set = synonyms.get(stemmer(member)) ?? new Set<string>();
    for (const other of members) set.add(other);
    synonyms.set(stemmer(member), set);
  }
}

/** Splits identifiers and prose into lower-case words: `takeScreenshot_v2` → take, screenshot, v, 2. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([a-zA-Z])([0-9])|([0-9])([a-zA-Z])/g, '$1$3 $2$4')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/**
 * Stems already computed: re-indexing a server stems the same few thousand
 * words again, and stemming is most of its cost. Emptied when full, so words
 * from queries cannot grow it without bound.
 */
const stems = new Map<string, string>();
const STEMS_HELD = 50_000;

/** A word as the index stores it, or null for a word that says nothing (stop words). */
export function term(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP.has(lower)) return null;
  let stem = stems.get(lower);
  if (stem === undefined) {
    if (stems.size >= STEMS_HELD) stems.clear();
    stem = stemmer(lower);
    stems.set(lower, stem);
  }
  return stem;
}

/** The search terms of a text. */
export function terms(text: string): string[] {
  return words(text)
    .map(term)
    .filter((value): value is string => value !== null);
}

/** The words that mean what these terms (stems) mean: indexed beside a tool's name, so a query needs no expansion. */
export function synonymsOf(own: readonly string[]): string[] {
  const mine = new Set(own);
  const found = new Set<string>();
  for (const stem of own) for (const word of synonyms.get(stem) ?? []) if (!mine.has(stemmer(word))) found.add(word);
  return [...found];
}
