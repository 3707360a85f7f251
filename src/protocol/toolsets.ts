// A toolset as it crosses to the DB writer and back: the user's own rules
// (servers, patterns), never an upstream's names or schemas (R1).

/** A toolset's name: a path segment of `/mcp/<toolset>` as it is typed, no escaping ever needed. */
export const TOOLSET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** One server in a toolset: everything of it unless `include` says which; `exclude` wins over `include`. */
export interface ToolsetServerRule {
  server: string;
  /** Patterns `tool:<glob>`, `prompt:<glob>`, `resource:<glob>`. */
  include?: string[];
  exclude?: string[];
}

export interface ToolsetSpec {
  name: string;
  description: string;
  servers: ToolsetServerRule[];
  /** What the set's tools/list shows: its tools (default) or the search meta-tools. */
  mode?: 'full' | 'search';
  /** In search mode, the set's tools listed beside the meta-tools: `SERVER/tool:<glob>`. */
  pinned?: string[];
}

/** A toolset as stored. */
export interface ToolsetRecord extends ToolsetSpec {
  created_at: string;
  updated_at: string;
}

/** The options of a spec besides its rules, present only when set (stored and exported that way). */
export function toolsetOptions({ mode, pinned }: Pick<ToolsetSpec, 'mode' | 'pinned'>): Pick<ToolsetSpec, 'mode' | 'pinned'> {
  return { ...(mode ? { mode } : {}), ...(pinned && pinned.length > 0 ? { pinned } : {}) };
}
