// The tool search index: identifiers split into words, users' words matched
// through stems and synonyms, one server's tools replaced as a whole, and a
// caller's view applied at query time (a tool the caller cannot see is never
// returned, however well it matches).
import fc from 'fast-check';
import t from 'tap';
import { INDEXED_CHARS, indexedAlike, ToolIndex, type SearchableTool } from '../src/search/tool-index.js';
import { synonymsOf, terms, thingsOf, words } from '../src/search/vocabulary.js';

const tool = (server: string, name: string, description = '', inputSchema: unknown = { type: 'object' }): SearchableTool => ({ name: `${server}__${name}`, server, description, inputSchema });

t.test('identifiers split at case changes, digits and punctuation; stop words dropped; words stemmed', async (t) => {
  t.same(words('browser_take_screenshot'), ['browser', 'take', 'screenshot']);
  t.same(words('createPullRequest'), ['create', 'pull', 'request']);
  t.same(words('API-get-users v2'), ['api', 'get', 'users', 'v', '2']);
  t.same(terms('the files in my folders'), ['file', 'folder']);
  t.same(words('list my PRs and URLs'), ['list', 'my', 'pr', 'and', 'url'], "an acronym's plural is the acronym");
  t.same(terms('close issue 42 in v2'), ['close', 'issu', 'v', '2'], 'a number standing alone is a value, a digit in a word stays');
  t.same(words('listPRs get_URLs HTTPServer NEWS'), ['list', 'pr', 'get', 'url', 'http', 'server', 'news'], "an acronym's plural inside an identifier too, nothing else");
  t.same(terms("what's on www.example.com? I need it"), ['exampl'], 'what contractions and web addresses leave, and "need", say nothing');
  t.notOk(synonymsOf(terms('create')).includes(terms('open')[0]!), '"open issues" are not created ones');
  t.ok(synonymsOf(terms('delete')).includes(terms('remove')[0]!), 'delete is also remove');
  t.notOk(synonymsOf(terms('delete')).includes(terms('delete')[0]!), 'a word is not its own synonym');
});

t.test('a phrase adds what it means beside its own words, even around an object pronoun; the same in tool text', async (t) => {
  t.same(terms('keep in mind that Alice likes tea'), ['keep', 'mind', 'alic', 'like', 'tea', 'rememb'], '"keep in mind" is remember, though "in" is a stop word');
  t.same(terms('switch it off'), ['switch', 'off', 'stop'], 'an object pronoun may stand inside a phrasal verb');
  t.same(terms('bring it up to date'), ['bring', 'date', 'updat', 'sync'], 'the longest phrase wins: not "bring up" (show)');
  t.same(terms('file a bug'), terms('file the bug'), 'articles are skipped');
  t.ok(terms('file a bug').includes('report'), 'an article inside a phrase does not break it');
  t.same(terms('shut down power up'), ['shut', 'down', 'power', 'stop', 'start'], 'the word after a phrase can start the next one');
  t.same(terms('setting up a cluster'), terms('set up the cluster'), 'matched on stems');
  t.same(terms('set the timer up'), ['set', 'timer'], 'only a pronoun, never a noun, stands inside a phrase');
  t.same(terms('up set'), ['set'], 'the words must come in order');
  const index = new ToolIndex();
  index.replaceServer('mem', [tool('mem', 'remember_fact', 'Stores a fact'), tool('mem', 'forget_fact', 'Deletes a fact')]);
  index.replaceServer('env', [tool('env', 'spin_up_env', 'Spin up a sandbox environment'), tool('env', 'list_envs', 'Lists environments')]);
  index.replaceServer('ui', [tool('ui', 'a_panel'), tool('ui', 'bring_up_panel')]);
  t.equal(index.find('keep in mind I prefer tea', 2)[0]?.name, 'mem__remember_fact');
  t.equal(index.find('create a sandbox', 2)[0]?.name, 'env__spin_up_env', 'a tool named with a phrase is found by what it means');
  t.equal(index.find('show the panel', 2)[0]?.name, 'ui__bring_up_panel', 'a phrase in a tool name is read too, not only in queries');
});

t.test('a user’s word finds a tool named with another word for it; the tool named with the user’s own word ranks first', async (t) => {
  const index = new ToolIndex();
  index.replaceServer('fs', [tool('fs', 'delete_file', 'Deletes a file'), tool('fs', 'read_file', 'Reads a file'), tool('fs', 'remove_tag', 'Removes a tag')]);
  index.replaceServer('gh', [tool('gh', 'create_issue', 'Opens a new issue in a repository', { type: 'object', properties: { title: { type: 'string', description: 'Issue title' } } })]);
  t.equal(index.find('erase the old log file', 3)[0]?.name, 'fs__delete_file');
  t.equal(index.find('open a ticket', 3)[0]?.name, 'gh__create_issue');
  t.equal(index.find('remove the tag', 3)[0]?.name, 'fs__remove_tag', 'the exact word beats its synonym');
  t.same(index.find('the of and', 3), [], 'a query of stop words finds nothing');
});

t.test('a thing a user names finds the tools named with its kind: the changelog is a file, the downloads a folder, a birthday a fact', async (t) => {
  t.ok(thingsOf(terms('read_file')).includes(terms('changelog')[0]!), 'a changelog is a file');
  t.ok(thingsOf(terms('list_directory')).includes(terms('downloads')[0]!), 'a tool named with either kind word');
  t.same(thingsOf(terms('take_screenshot')), [], 'a name that names no kind has no things');
  const index = new ToolIndex();
  index.replaceServer('fs', [tool('fs', 'read_file', 'Reads a file'), tool('fs', 'list_directory', 'Lists a directory')]);
  index.replaceServer('mem', [tool('mem', 'add_observations', 'Adds facts'), tool('mem', 'read_graph', 'Reads the graph')]);
  t.equal(index.find('show me the changelog', 4)[0]?.name, 'fs__read_file');
  t.equal(index.find('what is in my downloads', 4)[0]?.name, 'fs__list_directory');
  t.equal(index.find('my birthday is in May', 4)[0]?.name, 'mem__add_observations');
});

t.test('one server’s tools are replaced as a whole; an empty list removes them', async (t) => {
  const index = new ToolIndex();
  index.replaceServer('a', [tool('a', 'screenshot'), tool('a', 'navigate')]);
  index.replaceServer('b', [tool('b', 'screenshot')]);
  t.equal(index.size, 3);
  index.replaceServer('a', [tool('a', 'click')]);
  t.equal(index.size, 2);
  t.same(index.find('screenshot', 5).map((hit) => hit.name), ['b__screenshot'], 'the old tools are gone');
  index.replaceServer('b', []);
  t.same(index.find('screenshot', 5), []);
  t.equal(index.size, 1);
});

t.test('two versions of a tool are alike to the index when the words it reads are: a new copy of the schema, or a change past what is indexed, is not a change', async (t) => {
  const schema = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'object', properties: { path: { type: 'string', description } }, ...extra });
  const was = tool('fs', 'read_file', 'Reads a file', schema('where the file is'));
  t.ok(indexedAlike(was, { ...was, inputSchema: schema('where the file is') }), 'a new copy of the same schema');
  t.ok(indexedAlike(was, { ...was, inputSchema: schema('where the file is', { required: ['path'], $defs: { huge: 'x'.repeat(100_000) } }) }), 'a schema changed only in what is not indexed');
  t.notOk(indexedAlike(was, { ...was, inputSchema: schema('which file to open') }), "a parameter's description changed");
  t.notOk(indexedAlike(was, { ...was, description: 'Opens a file' }), 'the description changed');
  t.notOk(indexedAlike(was, { ...was, title: 'Read' }), 'a title added');
  const long = 'word '.repeat(INDEXED_CHARS);
  t.ok(indexedAlike({ ...was, description: `${long}one` }, { ...was, description: `${long}two` }), 'a description changed only past what is indexed');
});

t.test('property: a search never returns a tool its caller cannot see, nor more than the limit', async (t) => {
  const verbs = ['read', 'write', 'delete', 'list', 'search', 'create', 'move', 'click'];
  const nouns = ['file', 'issue', 'page', 'user', 'table', 'image'];
  const name = fc.tuple(fc.constantFrom(...verbs), fc.constantFrom(...nouns)).map(([verb, noun]) => `${verb}_${noun}`);
  t.doesNotThrow(() =>
    fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(fc.constantFrom('s1', 's2', 's3'), name), { minLength: 1, maxLength: 40, selector: ([server, tool]) => `${server}__${tool}` }),
      fc.func(fc.boolean()),
      fc.array(fc.constantFrom(...verbs, ...nouns, 'remove', 'ticket', 'picture'), { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 1, max: 10 }),
      (entries, visibleOf, query, limit) => {
        const index = new ToolIndex();
        const byServer = new Map<string, SearchableTool[]>();
        for (const [server, toolName] of entries) byServer.set(server, [...(byServer.get(server) ?? []), tool(server, toolName)]);
        for (const [server, tools] of byServer) index.replaceServer(server, tools);
        const visible = (name: string): boolean => visibleOf(name);
        const hits = index.find(query.join(' '), limit, visible);
        return hits.length <= limit && hits.every((hit) => visible(hit.name) && entries.some(([server, toolName]) => `${server}__${toolName}` === hit.name));
      },
    ),
  ),
  );
});

t.test('property: any text, however hostile, gives terms without throwing, none empty, in time linear in its length', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => terms(text).every((term) => term.length > 0)),
    { numRuns: 2000 },
  );
  const started = process.hrtime.bigint();
  terms(`${'A'.repeat(40_000)}b ${'x1 '.repeat(10_000)}`);
  t.ok(Number(process.hrtime.bigint() - started) / 1e6 < 500, '40,000 capitals and 10,000 numbered words in well under a second');
});

t.test("one server's tools are indexed up to a budget of text: thousands of long descriptions cost a bounded time, each tool past it is still found by its name", async (t) => {
  // Words each different, as a hostile upstream can write them within its 64 MB list.
  const prose = (chars: number, seed: number): string => {
    const parts: string[] = [];
    for (let i = 0, length = 0; length < chars; i++) {
      const word = `word${((i * 7_919 + seed * 104_729) % 1_000_003).toString(36).replace(/[0-9]/g, (digit) => 'qrstuvwxyz'[Number(digit)]!)}`;
      parts.push(word);
      length += word.length + 1;
    }
    return parts.join(' ');
  };
  const tools = Array.from({ length: 3_000 }, (_, i) => ({ ...tool('h', `tool_${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}`), description: prose(8_000, i) }));
  const index = new ToolIndex();
  const started = process.cpuUsage();
  index.replaceServer('h', tools);
  const spent = process.cpuUsage(started);
  const seconds = (spent.user + spent.system) / 1e6;
  t.ok(seconds < 5, `3,000 tools of 8,000 characters each indexed in ${seconds.toFixed(1)} s of CPU`);
  t.equal(index.find('tool j115', 1)[0]?.name, 'h__tool_j115', 'the last tool is found by its name');
  const cut = index.cutTools('h');
  t.ok(cut > 2_800 && cut < 3_000, `${cut} of the 3,000 tools are indexed in part (the daemon logs how many)`);
  index.add(tool('h', 'no_words', '', {}));
  t.equal(index.cutTools('h'), cut, 'a tool with no text past the budget lost none of it');
  index.replaceServer('long', [tool('long', 'one', 'x '.repeat(100_000))]);
  t.equal(index.cutTools('long'), 0, 'one tool cut at its own bound is not counted');
});
