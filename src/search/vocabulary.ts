// How tool text and a user's words become search terms: identifiers split at
// case changes, digits and punctuation (`browser_take_screenshot`,
// `createPullRequest`), words stemmed (Porter), stop words dropped, and a
// tool's name widened with the words users say for it ("remove" finds
// `delete_file`, "ticket" finds `create_issue`). Pure.
import { stemmer } from 'stemmer';

/**
 * Words that say nothing about a tool: function words, the pronouns of "tell me
 * everything about it", what a web address leaves (com, www); the last few are
 * what contractions leave ("what's" → what, s); "need", which any request may say.
 */
const STOP = new Set(
  'a about an and anything are as at be by can com could do does everything for from get give how i if in into is it its me my of on or please should something that the their them then there these this to up use using want was we what when which will with would www you your s t d ll re ve m need'.split(' '),
);

/**
 * Groups of words that mean the same to someone asking for a tool. A word of
 * a tool's name brings its group into the tool's "aka" field, weighted below
 * the name itself, so a tool named with the user's own word still ranks first.
 * Written from the tools' side: for each word tool names use, the everyday
 * words (and the content words of idioms: "jot down", "take down", "spin up")
 * people use for it, so a phrasing no query set has seen still lands. A word
 * may sit in several groups when it has several senses ("drop" a table, drag
 * and "drop"); a group is about words, never about one server's tools.
 * "open" is left out of the creating verbs: "open PRs", "open issues" ask for
 * the ones not yet closed.
 * Synonyms of description words were tried (a fourth field, weights 0.1–1):
 * recall@5 no better and recall@1 lower on the tuning set, so names only.
 */
const GROUPS = [
  // What is done: the verbs of tool names, with the everyday verbs for each.
  'delete remove erase drop destroy discard trash purge forget wipe clear eliminate rid nuke scrap unset kill tear',
  'create make new add generate start init build setup spin establish leave post fresh empty blank',
  'find search lookup look query locate seek discover hunt grep where anywhere mention mentions',
  'list enumerate show all every browse index catalog inventory overview ls',
  'read view fetch retrieve load open show display cat see contents content look peek inspect',
  'write save store put persist record jot keep overwrite dump',
  'edit modify change update alter patch replace rewrite tweak fix correct amend adjust revise typo assign resolve reopen rename',
  'append add attach extend',
  'move rename relocate mv transfer',
  'copy duplicate clone fork own',
  'upload attach submit',
  'download save grab pull',
  'run execute invoke call launch exec trigger fire kick command shell',
  'start begin launch kick trigger',
  'stop halt end kill terminate abort cancel shutdown down quit close',
  'close shut end finish quit exit dismiss',
  'wait sleep pause delay until hold spinner',
  'toggle switch enable disable flip turn off',
  'check verify test confirm',
  'status state progress health ci passing failing',
  'analyze analyse analysis diagnose investigate debug explain why cause root dig',
  'describe explain detail details inspect examine mean meaning why',
  'install deploy setup add',
  'uninstall remove delete',
  'upgrade update bump latest newer sync rebase',
  'scale replicas replica instances resize copies',
  'reconnect connect connection reset',
  'evaluate eval execute run javascript js script code',
  'compress zip gzip archive shrink pack tar',
  'simulate fake mock pretend emulate mimic',
  'emulate emulation device mobile throttle dark light theme scheme print',
  'echo repeat parrot mirror say',
  'tiny small little mini',
  'browser chrome firefox headless page webpage',
  'sum add addition plus total calculate compute arithmetic math number numbers',
  'identify who identity whoami',
  'convert translate transform turn',
  'parse extract convert pdf docx document',
  'scrape crawl extract fetch download grab content text collect gather article articles',
  'crawl spider whole entire site every',
  'push publish upload ship',
  'merge land combine integrate ship',
  'review approve approval critique lgtm signoff',
  'reply respond answer',
  'manage management administer administration maintenance maintain',
  'apply deploy manifest',
  'cleanup clean tidy clear purge teardown tear leftovers',
  'forward tunnel expose localhost',
  'ping alive responsive health healthy reachable',
  'interact interaction',
  'handle accept dismiss respond',
  'monitor watch track observe schedule recurring alert tracker trackers watcher watching weekly daily hourly',
  'trace profile profiling record recording',
  'audit score scores grade lighthouse',
  'feedback rate rating report opinion',
  'resize size dimension dimensions width height viewport shrink enlarge smaller narrower wider wide',
  'navigate go visit browse open goto load head reload refresh',
  'back previous return',
  'click press tap select push hit',
  'type enter input write key',
  'fill enter input complete populate field box',
  'select choose pick option dropdown switch focus active activate combobox menu',
  'hover mouse mouseover over pointer cursor tooltip',
  'drag drop slider reorder reordering',
  'keyboard key press hit keystroke shortcut escape esc',
  // What it is done to: the nouns of tool names, with the everyday nouns for each.
  'file files document doc disk txt md json yaml yml csv config readme dockerfile makefile',
  'folder directory directories dir subdirectory subfolder path mkdir',
  'tree hierarchy structure layout recursive nested outline organized organised organize',
  'size sizes space big bigger biggest large largest bytes heavy usage',
  'info information detail details metadata stats properties attributes timestamp modified changed',
  'allowed permitted permission permissions access accessible',
  'multiple many several batch bulk together both once',
  'text plain string words',
  'media image picture photo png jpg jpeg gif audio video sound icon logo mp3 wav',
  'page website site url web link webpage',
  'page doc document',
  'link links url urls href hyperlink uri uris',
  'map sitemap urls links',
  'web internet online google',
  'screenshot capture snapshot picture image grab shot screen snap printscreen',
  'snapshot dom accessibility a11y elements element uid uids ref refs',
  'screencast video record recording film filming footage',
  'heapsnapshot heap memory leak ram eating hogging consumption',
  'tab tabs window windows',
  'dialog alert popup prompt confirm modal',
  'form field fields',
  'console log logs output print warnings error errors stack javascript',
  'network request requests api xhr calls traffic http',
  'performance speed slow fast vitals',
  'css style styles styling color colors font fonts',
  'issue ticket bug task problem defect report crash crashes',
  'pull merge pr mr propose proposal',
  'repository repo repos project codebase',
  'branch ref',
  'commit commits history revision change changelog',
  'comment reply note remark respond discussion feedback say said',
  'message chat post send tell notify announce share broadcast dm',
  'channel room conversation',
  'thread conversation discussion convo',
  'reaction react emoji thumbs like heart',
  'history recent past previous earlier backlog',
  'user member person people account colleague teammate coworker everyone everybody developer dev',
  'profile bio',
  'self whoami current logged authenticated identity myself account bot integration',
  'team squad group',
  'organization org orgs company workspace',
  'release version versions deploy deployment',
  'project projects app application service',
  'tag label labels breakdown distribution',
  'code codebase source snippet function implementation',
  'sql query database db table tables rows row count select',
  'database db table',
  'key value cache',
  'log logs event events trace',
  'error errors issue exception crash failure failing broken',
  'event events occurrence',
  'replay session recording',
  'attachment attachments attached download',
  'doc docs documentation manual guide help reference',
  'pod pods container containers workload',
  'deployment deploy',
  'node nodes machine host worker',
  'cluster kubernetes k8s kubectl',
  'context cluster current switch ctx',
  'resource resources object kind url link',
  'chart charts helm package',
  'rollout rollback roll restart redeploy undo',
  'port ports',
  'generic arbitrary any custom raw',
  'env environment variable variables vars setting settings configuration',
  'annotated annotation annotations',
  'structured schema typed',
  'operation job task process',
  'long slow lengthy while',
  'subscriber subscription subscribe notifications updates follow',
  'logging log logs',
  'research investigate study',
  'paper papers article articles arxiv publication academic scientific',
  'related similar citations cited',
  'agent autonomous assistant',
  'monitor watcher',
  'block blocks paragraph section bullet',
  'children child nested sub inside under',
  'property properties field',
  'template templates boilerplate',
  'markdown md',
  'data source database table tables',
  'dsn dsns key',
  'entity entities node thing object item person concept remember',
  'relation relations relationship connection link edge connect relate associate owns belongs works',
  'observation observations fact facts note notes remember memorize',
  'graph knowledge memory know remember recall',
  'think thought thoughts reason reasoning step steps plan planning reflect ponder brainstorm problem figure',
  'sequential step steps sequence series',
  'map maps location place address',
  'place places location spot restaurant cafe shop business nearby venue museum hotel pharmacy park station airport',
  'local nearby near around business restaurant shop',
  'direction directions route drive driving walk walking transit',
  'distance far travel time km miles',
  'geocode coordinate coordinates latitude longitude lat lng gps',
  'reverse address',
  'elevation altitude height high sea level',
  'detail details info information hours reviews rating phone',
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

/** Splits identifiers and prose into lower-case words: `takeScreenshot_v2` → take, screenshot, v, 2; an acronym's plural is the acronym (`PRs` → pr). */
export function words(text: string): string[] {
  return text
    .replace(/\b([A-Z]{2,})s\b/g, '$1')
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

/** The search terms of a text. A number standing alone is a value (issue 42, 5 replicas, error 400), never what a tool does. */
export function terms(text: string): string[] {
  return words(text.replace(/\b\d+\b/g, ' '))
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
