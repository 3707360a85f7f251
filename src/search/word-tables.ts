// The word tables of tool search: English as people use it when asking for a
// tool (stop words, synonym groups, phrases, things by kind), data only.
// vocabulary.ts holds the rules that read them. Pure.

/**
 * Words that say nothing about a tool: function words, the pronouns of "tell me
 * everything about it", what a web address leaves (com, www); the last few are
 * what contractions leave ("what's" → what, s); "need", which any request may say.
 */
export const STOP = new Set(
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
 * Only the name's words bring groups: a description's many words would
 * bring so many that every tool matched everything a little.
 */
export const GROUPS = [
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
  'copy duplicate clone fork',
  'upload attach submit',
  'download save grab pull',
  'run execute invoke call launch exec trigger fire kick command shell',
  'start begin launch kick trigger',
  'stop halt end kill terminate abort cancel shutdown quit close',
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
  'reaction emoji thumbs heart',
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
  'long slow lengthy',
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

/**
 * Phrases whose meaning is not in their words: phrasal verbs and idioms people
 * use when asking for something ("keep in mind" is remember, "pull up" is show),
 * each after the word(s) it means. A phrase adds its meaning beside its own
 * words, in queries and tool text alike (the words still say something:
 * "mouse" in "mouse over"). Left out: phrases whose words already reach their
 * meaning through GROUPS ("get rid of", "clean up"), where a second copy
 * outweighs the rest of the query, and ones often meant otherwise ("log on" a
 * ticket, "roll out", "look up", "sign in").
 */
export const PHRASES = [
  "remember: keep in mind, bear in mind, commit to memory, don't forget, make a note of, take note of, make a mental note",
  'note save: jot down, write down, note down, put down in writing, take notes, write up',
  'delete remove: got rid of, throw away, throw out, do away with, wipe out, clear out, take out, cross out, cross off, strike out, weed out',
  'delete stop: take down, took down, knock down',
  'stop: shut down, shut off, turn off, switch off, power off, power down, wind down, close down, bring down, spin down, put a stop to, put an end to',
  'cancel: call off, back out of, opt out of, pull out of',
  'start: turn on, switch on, power on, power up, boot up, fire up, start up, kick off, get going, get started',
  'create: set up, spin up, whip up, put together, draw up, come up with, stand up, create from scratch',
  'find search: look for, search for, hunt for, hunt down, track down, seek out, dig up, come across, look through, search through',
  'investigate analyze: look into, dig into, delve into, get to the bottom of, figure out why, drill down, drill into',
  "error debug: go wrong, went wrong, gone wrong, not working, doesn't work, isn't working, stopped working",
  'crash fail: fall over, blow up, go down, went down, conk out',
  'show open: pull up, bring up, call up, let me see',
  'view read: look at, take a look at, have a look at, check out, look over, go over, skim through, read up on',
  'update sync: bring up to date, keep up to date, get up to date, up to date, catch up with, freshen up',
  "recent history: catch up on, catch me up, fill me in, what happened, what's new",
  'form fill: fill out',
  'type enter: type in, key in, punch in',
  'logout: log out, log off, sign out',
  'register account: sign up, sign me up',
  'backup copy: back up, make a copy of, save a copy of',
  'back previous: go back, step back, navigate back, go backward',
  'rollback undo: roll back, undo changes, revert back, go back to',
  'restore: bring back, put back, get back',
  'assign transfer: hand off, hand over, pass on to, turn over to',
  'message send: reach out to, get in touch with, get hold of, drop a line, send over, send out',
  'notify tell: let know, give a heads up, keep posted, keep in the loop, loop in',
  'finish close: wrap up, finish up, finish off, wind up, round off, close out',
  'submit: hand in, turn in, send in, send off',
  'fix resolve: sort out, fix up, patch up, iron out, straighten out, clear up, take care of, deal with',
  'add append: add on, tack on, throw in, stick in, add to the end',
  'combine merge: join up, bring together, mix together, roll into one',
  'split: break up, split up, break apart',
  'breakdown analyze: break down, broken down',
  'sum total count: add up, tally up, total up',
  'summarize summary: sum up, boil down, in a nutshell, gist of',
  'explain describe: walk through, walk me through, talk through, spell out, run through, make sense of',
  'check verify: make sure, double check, check on, check up on, sanity check, test out, try out',
  'wait pause: hold on, hang on, hold off, sit tight',
  'continue resume: carry on, keep going, move on, pick up where',
  'retry repeat: try again, run again, do again, one more time',
  'echo repeat: say back, read back, play back',
  'download: pull down, grab a copy',
  'publish release: push out, go live, make public, ship it',
  'restart reset: start over, start again, power cycle, start fresh, start from scratch',
  'connect link: hook up, link up, plug in, hook into',
  'disconnect: cut off, hang up',
  'collect gather: gather up, round up, pull together',
  'extract: pull out, pick out, dig out',
  'choose select: decide on, settle on, go with, opt for',
  'hover: mouse over, roll over',
  'navigate visit: go to, head to, head over to, jump to, browse to, take me to',
  'approve: sign off on, give the go ahead, green light, thumbs up',
  'reject decline: turn down, shoot down, push back on',
  'comment reply: chime in, weigh in, write back, get back to, respond to',
  'monitor watch track: keep an eye on, keep tabs on, keep track of, watch out for, watch over, stay on top of, check in on',
  'explore browse: poke around, look around, browse around',
  'running health: up and running, still up, still alive',
  'increase scale: scale up, ramp up, bump up, crank up',
  'reduce scale: scale down, tone down, cut down, cut back, trim down',
  'calculate compute: work out, figure out, crunch the numbers',
  'report create: file a bug, file a ticket, file an issue, file a report, raise an issue, log a bug, log an issue',
];

/**
 * Things people name instead of the kind of object a tool works on: "the
 * changelog" is a file, "my downloads" a folder, "my boss" a person, "my
 * birthday" a fact, "Denver" a place, "staging" a deployment, "yesterday's
 * orders" rows. Each line is the kind words tool names use, then the things of
 * that kind. A tool named with a kind word gets that kind's things in a field
 * of their own (as much weight as a synonym), so a query naming a thing finds
 * it. Written from what things are, never from one server's tools; single
 * words only, as they are indexed word by word ("new york" would bring "new").
 * Not added to queries as kind words, which would outweigh the rest of the
 * query, nor to "aka", which they would lengthen and so discount every synonym.
 * Words with a common other sense are left out ("box", "button").
 */
export const THINGS = [
  // Documents and file kinds.
  'file document: changelog, license, licence, resume, cv, todo, invoice, receipt, spreadsheet, worksheet, essay, draft, manuscript, letter, contract, memo, agenda, transcript, thesis, recipe, diary, journal, presentation, slides, slideshow, script, stylesheet, gitignore, dotfile, bashrc, zshrc, vimrc, crontab, lockfile, certificate, html, xml, toml, ini, xlsx, pptx, rtf, py, tsx, jsx, rb, ipynb, notebook',
  // Familiar folders.
  'folder directory: downloads, desktop, home, tmp, temp, src, lib, bin, dist, pictures, music, trash, cwd, pwd, appdata',
  // People in someone's life: family, friends, the people of their job.
  'person contact entity: mom, mum, mother, dad, father, parent, parents, wife, husband, spouse, partner, son, daughter, kid, kids, baby, brother, sibling, aunt, uncle, cousin, grandma, grandpa, grandmother, grandfather, grandparent, niece, nephew, boyfriend, girlfriend, fiance, fiancee, friend, bestie, neighbor, neighbour, roommate, flatmate, boss, manager, supervisor, mentor, landlord, doctor, dentist, therapist, teacher, coach',
  // Pets.
  'entity: pet, dog, cat, puppy, kitten, hamster, rabbit, bunny, horse, goldfish',
  // Facts about a person.
  'fact observation: birthday, anniversary, allergy, allergic, favorite, favourite, preference, prefers, hobby, hobbies, diet, vegetarian, vegan, nickname, hometown, job, career, employer, occupation, profession, wedding, degree, habit, routine',
  // Kinds of places, and well-known cities.
  'place location: city, town, village, downtown, neighborhood, neighbourhood, suburb, street, avenue, highway, office, hospital, clinic, school, university, campus, college, gym, bar, pub, bakery, grocery, supermarket, mall, store, beach, mountain, lake, river, bridge, stadium, theater, theatre, cinema, zoo, church, temple, mosque, embassy, parking, bank, atm, motel, hostel, landmark, monument, trail, campground, country, capital, london, paris, tokyo, berlin, madrid, rome, amsterdam, dublin, sydney, toronto, vancouver, chicago, boston, seattle, denver, austin, dallas, houston, miami, atlanta, phoenix, portland, nyc, york, francisco, angeles, vegas, beijing, shanghai, mumbai, delhi, singapore, dubai, istanbul, cairo',
  // Where software runs, and what runs there.
  'deployment cluster namespace: staging, prod, production, qa, uat, sandbox, preview, canary',
  'service: backend, frontend, microservice, webserver, nginx, redis, mysql, mongodb, kafka, rabbitmq, elasticsearch',
  'network: endpoint, endpoints, graphql, webhook',
  'code function: class, method, module, regex, constant, struct, component',
  // Parts of a page.
  'field input form: textbox, textarea, searchbox, password, username',
  'element click: btn, checkbox, tickbox, radio, icon, navbar, sidebar, banner, captcha',
  // Web places.
  'website web page: homepage, blog, wiki, forum, wikipedia, reddit, youtube',
  // Records a business keeps.
  'row record table sql: orders, customers, transactions, products, sales, signups, purchases, employees, entries, revenue, shipments, bookings, reservations',
  // Pictures.
  'image: selfie, wallpaper, avatar, thumbnail, meme, diagram, favicon',
  // Things going wrong.
  'error issue: outage, incident, regression, glitch',
  'branch: master, trunk, hotfix',
];

/** Skipped when matching a phrase, on both sides: "file a bug" is "file the bug". */
export const ARTICLES = new Set(['a', 'an', 'the']);
/** Object pronouns, which English puts between a phrasal verb and its particle ("turn it off", "set them up"). */
export const BETWEEN = new Set(['it', 'them', 'this', 'that', 'these', 'those', 'him', 'her', 'me', 'us', 'everything', 'something']);
