// Takes the live tool lists of real MCP servers from the npm registry (each
// started with npx, dummy credentials: listing needs none) and writes them,
// with each server's package and version (servers that need the internet to
// list, such as Stripe's and Supabase's, are not among them), to bench/search/real-tools.json —
// the corpus of the search-quality bench. Run again to refresh it:
//   npm run build && node dist/bench/search/capture.js
import { writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import { CORPUS_FILE, type CorpusServer, type CorpusTool } from './corpus.js';

const LOOSE_PAGE = z.object({ tools: z.array(z.custom<CorpusTool>((tool) => typeof (tool as { name?: unknown })?.name === 'string')), nextCursor: z.string().optional() });

interface Source {
  server: string;
  pkg: string;
  args?: string[];
  env?: Record<string, string>;
}

const scratch = mkdtempSync(join(tmpdir(), 'coffer-capture-'));
const SOURCES: Source[] = [
  { server: 'everything', pkg: '@modelcontextprotocol/server-everything' },
  { server: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem', args: [scratch] },
  { server: 'memory', pkg: '@modelcontextprotocol/server-memory' },
  { server: 'thinking', pkg: '@modelcontextprotocol/server-sequential-thinking' },
  { server: 'github', pkg: '@modelcontextprotocol/server-github', env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'dummy' } },
  { server: 'gitlab', pkg: '@modelcontextprotocol/server-gitlab', env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'dummy' } },
  { server: 'slack', pkg: '@modelcontextprotocol/server-slack', env: { SLACK_BOT_TOKEN: 'dummy', SLACK_TEAM_ID: 'T0' } },
  { server: 'postgres', pkg: '@modelcontextprotocol/server-postgres', args: ['postgresql://127.0.0.1:1/none'] },
  { server: 'puppeteer', pkg: '@modelcontextprotocol/server-puppeteer', env: { PUPPETEER_SKIP_DOWNLOAD: '1' } },
  { server: 'redis', pkg: '@modelcontextprotocol/server-redis', args: ['redis://127.0.0.1:1'] },
  { server: 'brave', pkg: '@modelcontextprotocol/server-brave-search', env: { BRAVE_API_KEY: 'dummy' } },
  { server: 'maps', pkg: '@modelcontextprotocol/server-google-maps', env: { GOOGLE_MAPS_API_KEY: 'dummy' } },
  { server: 'playwright', pkg: '@playwright/mcp' },
  { server: 'devtools', pkg: 'chrome-devtools-mcp' },
  { server: 'notion', pkg: '@notionhq/notion-mcp-server', env: { NOTION_TOKEN: 'dummy' } },
  { server: 'sentry', pkg: '@sentry/mcp-server', args: ['--access-token=dummy'] },
  { server: 'kubernetes', pkg: 'mcp-server-kubernetes' },
  { server: 'firecrawl', pkg: 'firecrawl-mcp', env: { FIRECRAWL_API_KEY: 'dummy' } },
];

async function capture(source: Source): Promise<CorpusServer | null> {
  const client = new Client({ name: 'coffer-capture', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: 'npx',
    args: ['-y', source.pkg, ...(source.args ?? [])],
    env: { ...(process.env as Record<string, string>), ...source.env },
    stderr: 'ignore',
  });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const tools = [];
    let cursor: string | undefined;
    do {
      // Loosely read: some real servers break the SDK's result schema (a tool's inputSchema without type "object").
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, LOOSE_PAGE, { timeout: 60_000 });
      tools.push(...page.tools.map(({ name, title, description, inputSchema }) => ({ name, title, description, inputSchema })));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const info = client.getServerVersion();
    return { server: source.server, package: source.pkg, version: info?.version ?? 'unknown', tools };
  } catch (error) {
    process.stderr.write(`${source.pkg}: ${error instanceof Error ? error.message : String(error)}\n`);
    return null;
  } finally {
    await client.close().catch(() => undefined);
  }
}

const servers: CorpusServer[] = [];
for (const source of SOURCES) {
  const server = await capture(source);
  if (server) servers.push(server);
  process.stderr.write(`${source.pkg}: ${server ? `${server.tools.length} tools` : 'skipped'}\n`);
}
writeFileSync(CORPUS_FILE, `${JSON.stringify({ capturedAt: new Date().toISOString(), servers }, null, 1)}\n`);
process.stderr.write(`${servers.reduce((sum, server) => sum + server.tools.length, 0)} tools from ${servers.length} servers → ${CORPUS_FILE}\n`);
