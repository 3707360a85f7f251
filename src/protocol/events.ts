// Live events of the daemon: published on the main thread's event bus, and
// streamed to admin WebSocket clients as they are.
import type { CapabilityType, ListKind } from './capabilities.js';
import type { AuditEntry } from './db.js';
import type { ActorState } from './actor.js';

/** What was used: the preference type of its kind. */
export type InvocationKind = CapabilityType;
export type InvocationStatus = 'ok' | 'error' | 'timeout' | 'denied';

/** One tools/call, resources/read or prompts/get through the gateway: never its arguments or result. */
export interface InvocationRecord {
  at: string;
  server: string;
  kind: InvocationKind;
  key: string;
  duration_ms: number;
  status: InvocationStatus;
  /**
   * The calling client session: its id on the main thread, an opaque tag once
   * recorded or published. A 2026-07-28 caller has no session: its credential's
   * digest stands in, so one client's calls share a tag as a session's do.
   */
  session: string;
  /** The JSON-RPC error code, when status is not ok. */
  error_code: number | null;
}

/** One problem of the config file, where it is written (lines and columns from 1). */
export interface ConfigFileIssue {
  line: number;
  column: number;
  /** `servers[1].transport.env.TOKEN`; `(file)` for the file as a whole. */
  field: string;
  message: string;
}

export type CofferEvent =
  | { type: 'health'; server: string; state: ActorState; last_error: string | null; at: string }
  | { type: 'list_changed'; server: string | null; kind: ListKind; at: string }
  | { type: 'degraded'; server: string; kind: ListKind; reason: string; at: string }
  | { type: 'recovered'; server: string; kind: ListKind; at: string }
  | { type: 'server'; action: 'added' | 'updated' | 'removed'; server: string; at: string }
  | { type: 'preference'; server: string; capability_type: string; capability_key: string; enabled: boolean; at: string }
  /** The user's own name or description of a tool or prompt changed (null: the upstream's again). */
  | { type: 'words'; server: string; capability_type: string; capability_key: string; own_name: string | null; own_description: string | null; at: string }
  | { type: 'audit'; entry: AuditEntry }
  | { type: 'invocation'; invocation: InvocationRecord }
  /** A server with an empty namespace lists a name another server already exposes: it is exposed as `exposed` instead. */
  | { type: 'namespace_collision'; server: string; kind: ListKind; original: string; exposed: string; at: string }
  /** The config file changed on disk: applied (the servers and toolsets it changed), refused (errors; nothing changed) or failed part-way (message). */
  | {
      type: 'config_file';
      path: string;
      status: 'applied' | 'refused' | 'failed';
      /** Servers. */
      added: string[];
      updated: string[];
      removed: string[];
      toolsets: ConfigFileChanges;
      errors: ConfigFileIssue[];
      message: string | null;
      at: string;
    }
  | { type: 'toolset'; action: 'added' | 'updated' | 'removed'; toolset: string; at: string }
  /** A client credential now sees this toolset only (null: the whole surface); its open sessions were closed. */
  | { type: 'client_bound'; client: string; toolset: string | null; at: string };

/** Names a config file change added, updated and removed. */
export interface ConfigFileChanges {
  added: string[];
  updated: string[];
  removed: string[];
}

export type CofferEventType = CofferEvent['type'];
