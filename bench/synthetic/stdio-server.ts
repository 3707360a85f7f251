// A synthetic MCP server over stdio (newline-delimited JSON-RPC), same tools
// and behaviour as the HTTP host's servers.
//
//   node dist/bench/synthetic/stdio-server.js [--tools N] [--latency MS] [--name NAME]
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { answer, DEFAULT_BEHAVIOUR, HANG, type RpcMessage } from './mcp-core.js';

const { values } = parseArgs({
  options: { tools: { type: 'string', default: '20' }, latency: { type: 'string', default: '0' }, name: { type: 'string', default: 'stdio' } },
});
const behaviour = { ...DEFAULT_BEHAVIOUR, tools: Number(values.tools), latencyMs: Number(values.latency) };

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (!line.trim()) return;
  let message: RpcMessage;
  try {
    message = JSON.parse(line) as RpcMessage;
  } catch {
    return;
  }
  void answer(message, behaviour, values.name).then((reply) => {
    if (reply !== null && reply !== HANG) process.stdout.write(`${reply}\n`);
  });
});
lines.on('close', () => process.exit(0));
