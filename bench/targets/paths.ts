// Where the compiled pieces live (this file is dist/bench/targets/paths.js at run time).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const BENCH_DIST = join(here, '..');
export const HTTP_HOST = join(BENCH_DIST, 'synthetic', 'http-host.js');
export const STDIO_SERVER = join(BENCH_DIST, 'synthetic', 'stdio-server.js');
export const LOOPBACK_PRELOAD = join(BENCH_DIST, 'synthetic', 'loopback-only.js');
export const DAEMON_RUNNER = join(BENCH_DIST, 'daemon-runner.js');
const require = createRequire(import.meta.url);
export const MCP_HUB_CLI = join(dirname(require.resolve('mcp-hub/package.json')), 'dist', 'cli.js');
export const MCP_HUB_VERSION = (require('mcp-hub/package.json') as { version: string }).version;
export const SDK_VERSION = (require('@modelcontextprotocol/sdk/package.json') as { version: string }).version;
