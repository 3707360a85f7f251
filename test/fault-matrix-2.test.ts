// The upstream fault matrix, part 2: HTTP upstreams that answer 500 / 401 /
// 404, close the socket, hang or drip; upstreams whose tools change (with a
// restart, or silently); a 50 MB answer; a notification flood. Same checks
// as part 1 (test/helpers/fault-matrix.ts).
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { waitFor } from './helpers/gateway.js';
import { callOutcome, faultMatrix, timed, type FaultCase, type FaultContext } from './helpers/fault-matrix.js';

/** Short, so "visible after the TTL" is quick to prove; long enough that a reconnect is seen well before it. */
const CACHE_TTL_MS = 4_000;

const httpStatus = (status: 500 | 401 | 404): FaultCase => ({
  name: `HTTP ${status} on every request`,
  transport: 'http',
  fault: { fault: `http-${status}` },
  listed: 'absent',
  call: ['UPSTREAM_UNAVAILABLE'],
});

async function pidOf(ctx: FaultContext): Promise<number> {
  const result = await ctx.client.callTool({ name: `${ctx.name}__whoami`, arguments: {} });
  return (JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { pid: number }).pid;
}

/** Lists until `tool` is there: the first list of a fresh upstream may miss its deadline on a busy machine. */
const listedOnce = (ctx: FaultContext, tool: string): Promise<boolean> => waitFor(tool, async () => (await ctx.toolNames()).includes(tool), 20_000);

const own = (ctx: FaultContext, names: string[]): string[] => names.filter((name) => name.startsWith(`${ctx.name}__`)).sort();

const CASES: FaultCase[] = [
  httpStatus(500),
  httpStatus(401),
  httpStatus(404),
  { name: 'closes the socket without answering', transport: 'http', fault: { fault: 'close-socket' }, listed: 'absent', call: ['UPSTREAM_UNAVAILABLE'] },
  { name: 'HTTP: hangs after connect', transport: 'http', fault: { fault: 'hang' }, listed: 'absent', call: ['UPSTREAM_TIMEOUT'] },
  { name: 'HTTP: drips one byte a second', transport: 'http', fault: { fault: 'drip' }, listed: 'absent', call: ['UPSTREAM_TIMEOUT'] },
  {
    name: 'restarts with a different tool set: seen at the reconnect, not after the TTL',
    atStart: { tools: 'echo,whoami' },
    async provoke(ctx) {
      await listedOnce(ctx, `${ctx.name}__whoami`);
      await ctx.fault.set({ tools: 'echo,stats' });
      const before = await pidOf(ctx);
      process.kill(before, 'SIGKILL');
      await waitFor('a new child', async () => ctx.fault.pids().length === 2 && (await ctx.health()).state === 'ready');
    },
    listed: 'present',
    call: ['ok'],
    async during(ctx, t) {
      t.same(own(ctx, await ctx.toolNames()), [`${ctx.name}__echo`, `${ctx.name}__stats`], 'the new set, without waiting for the TTL');
    },
    maxSpawns: 2,
  },
  {
    name: 'changes its tools without list_changed: seen after the TTL, or at once on refresh',
    atStart: { tools: 'echo,whoami' },
    async provoke(ctx) {
      await listedOnce(ctx, `${ctx.name}__whoami`);
      await ctx.fault.set({ tools: 'echo,stats' });
    },
    listed: 'present',
    call: ['ok'],
    async during(ctx, t) {
      const seen = await timed(() => waitFor('the silent change', async () => own(ctx, await ctx.toolNames()).includes(`${ctx.name}__stats`), CACHE_TTL_MS + 5_000));
      t.pass(`the new tool is listed ${seen.ms} ms later (TTL ${CACHE_TTL_MS} ms)`);
      await ctx.fault.set({ tools: 'echo,getenv' });
      t.equal((await ctx.gateway.api('POST', `/servers/${ctx.name}/refresh`)).status, 200);
      t.same(own(ctx, await ctx.toolNames()), [`${ctx.name}__echo`, `${ctx.name}__getenv`], 'a refresh shows the next change at once');
    },
  },
  {
    name: 'floods notifications (~4,000 a second, a quarter of them list_changed)',
    fault: { fault: 'flood' },
    listed: 'present',
    call: ['ok'],
    async during(ctx, t) {
      let changed = 0;
      ctx.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
      const rounds = await timed(async () => {
        for (let round = 0; round < 10; round += 1) {
          t.equal((await callOutcome(ctx.client, 'good__echo')).value, 'ok');
          await ctx.toolNames();
        }
      });
      t.ok(rounds.ms < 20_000, `10 calls and lists during the flood took ${rounds.ms} ms`);
      t.comment(`the client got ${changed} tools/list_changed meanwhile`);
    },
  },
  {
    name: 'answers a call with 50 MB',
    fault: { fault: 'big', mb: 50 },
    // Passed through unchanged, given the time: 50 MB is below the 64 MB an actor accepts per message.
    timeouts: { request_ms: 30_000 },
    listed: 'present',
    call: ['ok'],
  },
  {
    name: 'answers a list and a call with 65 MB: over the 64 MB cap, dropped, a clean timeout',
    fault: { fault: 'big', mb: 65, list: true },
    timeouts: { request_ms: 5_000 },
    listed: 'absent',
    call: ['UPSTREAM_TIMEOUT'],
  },
];

faultMatrix(t, CASES, { cacheTtlMs: CACHE_TTL_MS });
