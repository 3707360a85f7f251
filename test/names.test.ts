// Names every model host accepts: properties of fitting (fast-check, bounded
// runs) over the merge and the resolver, the pinned form of a shortened name,
// and the refusal of a namespace that cannot fit at `mcp add`/`update`, with a
// real upstream whose shortened tool is called through real HTTP.
import t from 'tap';
import fc from 'fast-check';
import { fitName, MIN_NAME_BUDGET, MODEL_NAME_PATTERN, prefixProblem } from '../src/router/names.js';
import { mergeLists } from '../src/router/merge.js';
import { prefixIndex, resolveExposed, type ResolverDirectory } from '../src/router/resolver.js';
import { isServerName } from '../src/protocol/server-config.js';
import { startGateway } from './helpers/gateway.js';
import { everythingStdio } from './helpers/upstreams.js';

const budget = fc.integer({ min: MIN_NAME_BUDGET, max: 64 });
const serverName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/).filter(isServerName);
const toolName = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_.\-/:]{1,90}$/), fc.string({ minLength: 1, maxLength: 90 }));

t.test('every fitted name matches the model pattern within its budget, and a name that fits is unchanged', async (t) => {
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 300 }), budget, (full, max) => {
      const fitted = fitName(full, max);
      if (!MODEL_NAME_PATTERN.test(fitted) || fitted.length > max) return false;
      return /^[a-zA-Z0-9_-]+$/.test(full) && full.length <= max ? fitted === full : !fitted.includes('__');
    }),
    { numRuns: 2_000 },
  );
  t.pass('2,000 names');
});

t.test('a shortened name is pinned: the same on every start and version', async (t) => {
  const full = 'everything.mirror-production-us-east-1__trigger-long-running-operation';
  t.equal(fitName(full, 64), 'everything-mirror-production-us-east-1-_trigger-lon-c1efe3186e45');
  t.equal(fitName(full, 51), 'everything-mirror-production-us-east-1-c1efe3186e45');
});

t.test('merged lists: every exposed name matches, routes back to its server and original, and no two collide', async (t) => {
  const lists = fc.uniqueArray(
    fc.record({ server: serverName, namespace: fc.oneof(fc.constant(''), serverName), tools: fc.uniqueArray(toolName, { minLength: 1, maxLength: 8 }) }),
    { minLength: 1, maxLength: 5, selector: (list) => list.server },
  );
  await fc.assert(
    fc.asyncProperty(lists, budget, async (input, max) => {
      // Registered servers never share a prefix (the registry refuses it).
      const prefixes = input.map((list) => list.namespace || list.server);
      if (new Set(prefixes).size !== prefixes.length) return true;
      const upstream = input.map((list) => ({ server: list.server, namespace: list.namespace, items: list.tools.map((name) => ({ name })) }));
      const index = prefixIndex(input.map((list) => ({ name: list.server, namespace: list.namespace })));
      const merged = mergeLists('tools', upstream, () => true, (_kind, exposed) => {
        const at = exposed.indexOf('__');
        return at > 0 ? index.owners.get(exposed.slice(0, at)) : undefined;
      }, (name) => fitName(name, max));
      const names = merged.items.map((item) => String(item.name));
      if (new Set(names).size !== names.length) return false;
      const directory: ResolverDirectory = { routes: () => merged.routes, refresh: async () => merged.routes, prefixes: () => index, original: (_server, _kind, name) => name };
      for (const name of names) {
        if (!MODEL_NAME_PATTERN.test(name) || name.length > max) return false;
        const route = merged.routes.get(name);
        const resolved = await resolveExposed(directory, 'tools', name);
        if (!route || !resolved || 'ambiguous' in resolved || resolved.server !== route.server || resolved.original !== route.original) return false;
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass('300 surfaces');
});

t.test('a name no list knows, with several unprefixed servers: only those that may have that kind are candidates', async (t) => {
  const index = prefixIndex([{ name: 'files', namespace: '' }, { name: 'jobs', namespace: '' }, { name: 'web', namespace: '' }]);
  const serves: Record<string, string[] | undefined> = { files: ['tools', 'resources', 'resourceTemplates'], jobs: ['tools'], web: undefined };
  const directory = (known: string[]): ResolverDirectory => ({
    routes: () => new Map(),
    refresh: async () => new Map(),
    prefixes: () => index,
    original: (_server, _kind, name) => name,
    serves: (server, kind) => (known.includes(server) ? serves[server]?.includes(kind) : undefined),
  });
  t.same(await resolveExposed(directory(['files', 'jobs', 'web']), 'resources', 'test://template/1'), { ambiguous: ['files', 'web'] }, 'a server not known yet stays a candidate');
  t.same(await resolveExposed(directory(['files', 'jobs']), 'resources', 'test://template/1'), { ambiguous: ['files', 'web'] });
  const settled = directory(['files', 'jobs', 'web']);
  serves.web = ['prompts'];
  t.same(await resolveExposed(settled, 'resources', 'test://template/1'), { server: 'files', original: 'test://template/1', unlisted: true }, 'the one that declared resources');
  t.same(await resolveExposed(settled, 'tools', 'unlisted'), { ambiguous: ['files', 'jobs'] }, 'two with tools: never a guess');
});

t.test('a namespace that cannot fit is refused with one that can', async (t) => {
  t.equal(prefixProblem('fs', 64), null);
  t.equal(prefixProblem('', 51), null, 'the empty namespace passes names through (each one fitted)');
  const dotted = prefixProblem('everything.mirror-production-us-east-1', 64)!;
  t.equal(dotted.suggestion, 'everything-mirror-production-us-east-1');
  const long = prefixProblem('everything-mirror-production-us-east-1', 51)!;
  t.equal(long.suggestion, 'everything-mirror-production-us-e');
  t.equal(prefixProblem(long.suggestion, 51), null, 'the suggestion itself fits');
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 80 }), budget, (prefix, max) => {
      const problem = prefixProblem(prefix, max);
      return problem === null || (prefixProblem(problem.suggestion, max) === null && isServerName(problem.suggestion));
    }),
    { numRuns: 1_000 },
  );
});

t.test('through the daemon: NAMESPACE_INVALID at add and update; a shortened tool is listed and called', async (t) => {
  const gateway = await startGateway({ nameBudget: 51 });
  t.teardown(() => gateway.close());
  const refused = await gateway.api('POST', '/servers', { ...everythingStdio('everything.mirror-production-us-east-1') });
  t.equal(refused.status, 422);
  t.equal(refused.body.error.code, 'NAMESPACE_INVALID');
  t.match(refused.body.error.message, /--namespace everything-mirror-production-us-e$/);
  t.equal(refused.body.error.details.suggestion, 'everything-mirror-production-us-e');

  await gateway.addServer({ ...everythingStdio('ev'), namespace: 'everything-mirror-prod-use1' });
  const update = await gateway.api('PATCH', '/servers/ev', { namespace: 'ev.mirror' });
  t.equal(update.body.error.code, 'NAMESPACE_INVALID', 'an update to a namespace that cannot fit is refused too');
  const client = await gateway.client();
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  t.ok(names.every((name) => MODEL_NAME_PATTERN.test(name) && name.length <= 51), names.join(', '));
  const echo = names.find((name) => name === 'everything-mirror-prod-use1__echo');
  t.ok(echo, 'a name that fits is unchanged');
  const shortened = names.find((name) => name.startsWith('everything-mirror-prod-use1-_toggle-su'));
  t.equal(shortened, fitName('everything-mirror-prod-use1__toggle-subscriber-updates', 51), 'a long one is shortened');
  const result = await client.callTool({ name: shortened!, arguments: {} });
  t.notOk(result.isError, 'and routes back to the upstream');
  const view = await gateway.api('GET', '/servers/ev/capabilities');
  const item = view.body.tools.items.find((tool: { key: string }) => tool.key === 'toggle-subscriber-updates');
  t.equal(item.exposed_name, shortened, 'the management view shows the upstream name with the name clients see');
});
