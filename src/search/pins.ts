// Pinned tools: in search mode, the tools a user wants listed beside the
// meta-tools (the few a client uses all the time). A pin names a server and a
// glob over its upstream tool names, `SERVER/tool:<glob>`, keyed like the
// switches so it survives renames of the exposed name; it only picks among
// the tools the caller already sees (switches, toolset), never adds one. Pure.
import { SERVER_NAME_PATTERN } from '../protocol/server-config.js';
import { globMatcher, type Glob } from '../toolsets/patterns.js';

export const PIN_SYNTAX = 'SERVER/tool:<glob> (* any characters, ? one), e.g. fs/tool:read_*';

export interface Pin {
  server: string;
  glob: string;
}

/** `fs/tool:read_*` → its server and glob; null when malformed. */
export function parsePin(text: string): Pin | null {
  const slash = text.indexOf('/');
  const server = text.slice(0, slash);
  const pattern = text.slice(slash + 1);
  if (slash <= 0 || !SERVER_NAME_PATTERN.test(server) || !pattern.startsWith('tool:') || pattern.length === 'tool:'.length) return null;
  return { server, glob: pattern.slice('tool:'.length) };
}

/** Pins as the gateway-wide setting writes them (COFFER_PINNED_TOOLS): separated by commas or white space. */
export function splitPins(text: string | undefined): string[] {
  return (text ?? '').split(/[\s,]+/).filter((entry) => entry !== '');
}

export class Pins {
  private readonly byServer = new Map<string, Glob[]>();

  /** Malformed entries are ignored: they are refused where a user writes them (spec, CLI, env). */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const pin = parsePin(entry);
      if (!pin) continue;
      const list = this.byServer.get(pin.server) ?? [];
      list.push(globMatcher(pin.glob));
      this.byServer.set(pin.server, list);
    }
  }

  get empty(): boolean {
    return this.byServer.size === 0;
  }

  /** Whether the upstream tool `key` of `server` is pinned. */
  has(server: string, key: string): boolean {
    return this.byServer.get(server)?.some((match) => match(key)) ?? false;
  }
}
