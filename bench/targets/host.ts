// The synthetic HTTP upstream host, as the harness sees it.
import { startChild, type Child } from '../proc.js';
import type { ServerBehaviour } from '../synthetic/mcp-core.js';
import type { UpstreamSpec } from './coffer.js';
import { HTTP_HOST } from './paths.js';

export interface Host {
  pid: number;
  url(index: number): string;
  floorUrl: string;
  configure(change: {
    defaults?: Partial<ServerBehaviour>;
    servers?: Record<number, Partial<ServerBehaviour>>;
    ranges?: Array<{ from: number; to: number; behaviour: Partial<ServerBehaviour> }>;
  }): Promise<void>;
  setFloor(tools: unknown[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startHost(tools: number): Promise<Host> {
  const child: Child = await startChild(process.execPath, [HTTP_HOST, '--tools', String(tools)]);
  const base = `http://127.0.0.1:${child.hello.port as number}`;
  const post = async (path: string, body: unknown): Promise<void> => {
    const response = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`host ${path}: ${response.status}`);
    await response.text();
  };
  return {
    pid: child.pid,
    url: (index) => `${base}/s/${index}/mcp`,
    floorUrl: `${base}/floor/mcp`,
    configure: (change) => post('/ctl/config', change),
    setFloor: (list) => post('/ctl/floor', { tools: list }),
    stop: () => child.stop(2_000),
  };
}

/** `count` upstreams on the host from index `from`, `tools` tools each, named `<prefix><i>`: ready to register. */
export async function hostedUpstreams(host: Host, from: number, count: number, tools: number, prefix: string): Promise<UpstreamSpec[]> {
  await host.configure({ ranges: [{ from, to: from + count, behaviour: { tools } }] });
  return Array.from({ length: count }, (_unused, i) => ({ name: `${prefix}${i}`, url: host.url(from + i) }));
}
