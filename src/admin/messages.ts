// The pure half of the admin WebSocket: parsing and validating client frames,
// and the per-client subscription filter. No I/O; unit-tested directly.
import { ADMIN_COMMAND_TYPES, COFFER_EVENT_TYPES, type AdminCommand } from '../protocol/admin.js';
import type { ErrorBody } from '../protocol/errors.js';
import type { CofferEvent, CofferEventType } from '../protocol/events.js';

export const MAX_ID_LENGTH = 128;
const MAX_NAME_LENGTH = 256;
const MAX_FILTER_ENTRIES = 1024;

export type ParseResult = { ok: true; command: AdminCommand } | { ok: false; id?: string; error: ErrorBody };

function bad(message: string, id?: string): ParseResult {
  return id === undefined ? { ok: false, error: { code: 'BAD_REQUEST', message } } : { ok: false, id, error: { code: 'BAD_REQUEST', message } };
}

function isStringArray(value: unknown, maxLength: number): value is string[] {
  return Array.isArray(value) && value.length <= MAX_FILTER_ENTRIES && value.every((entry) => typeof entry === 'string' && entry.length > 0 && entry.length <= maxLength);
}

/**
 * One text frame → a command, or a BAD_REQUEST saying why. `id` is echoed in
 * the error when the frame had a usable one, so a client can fail that request.
 */
export function parseClientMessage(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return bad('frame is not valid JSON: send one JSON object per text message');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('frame must be a JSON object like {"type":"ping","id":"1"}');
  const frame = value as Record<string, unknown>;
  const rawId = frame.id;
  const id = typeof rawId === 'string' && rawId.length > 0 && rawId.length <= MAX_ID_LENGTH ? rawId : undefined;
  const type = frame.type;
  if (typeof type !== 'string') return bad(`'type' must be a string, one of ${ADMIN_COMMAND_TYPES.join(', ')}`, id);
  if (!(ADMIN_COMMAND_TYPES as readonly string[]).includes(type)) return bad(`unknown type '${type.slice(0, 64)}': use one of ${ADMIN_COMMAND_TYPES.join(', ')}`, id);
  if (id === undefined) return bad(`'id' must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  switch (type) {
    case 'ping':
      return { ok: true, command: { type, id } };
    case 'refresh':
    case 'test': {
      const server = frame.server;
      if (typeof server !== 'string' || server.length === 0 || server.length > MAX_NAME_LENGTH) return bad(`'server' must be the name of a registered server`, id);
      return { ok: true, command: { type, id, server } };
    }
    case 'subscribe': {
      const command: AdminCommand = { type, id };
      if (frame.types !== undefined && frame.types !== null) {
        if (!isStringArray(frame.types, 64)) return bad(`'types' must be an array of event types (${COFFER_EVENT_TYPES.join(', ')})`, id);
        const unknown = frame.types.filter((entry) => !(COFFER_EVENT_TYPES as readonly string[]).includes(entry));
        if (unknown.length > 0) return bad(`unknown event type '${unknown[0]!.slice(0, 64)}': use ${COFFER_EVENT_TYPES.join(', ')}`, id);
        command.types = frame.types as CofferEventType[];
      }
      if (frame.servers !== undefined && frame.servers !== null) {
        if (!isStringArray(frame.servers, MAX_NAME_LENGTH)) return bad(`'servers' must be an array of server names`, id);
        command.servers = frame.servers;
      }
      return { ok: true, command };
    }
  }
  return bad(`unknown type '${type}'`, id);
}

/** The server an event is about, or null when it concerns the whole gateway. */
export function eventServer(event: CofferEvent): string | null {
  switch (event.type) {
    case 'audit':
      return event.entry.server;
    case 'invocation':
      return event.invocation.server;
    case 'config_file':
    case 'toolset':
    case 'client_bound':
      return null;
    default:
      return event.server;
  }
}

/** A client's subscription: null = everything of that dimension. */
export class EventFilter {
  private types: Set<CofferEventType> | null = null;
  private servers: Set<string> | null = null;

  /** Replaces the filter; absent or empty lists mean "all". */
  set(types: readonly CofferEventType[] | undefined, servers: readonly string[] | undefined): { types: CofferEventType[] | null; servers: string[] | null } {
    this.types = types && types.length > 0 ? new Set(types) : null;
    this.servers = servers && servers.length > 0 ? new Set(servers) : null;
    return { types: this.types ? [...this.types] : null, servers: this.servers ? [...this.servers] : null };
  }

  /** Events not tied to one server (a gateway-wide list_changed, a daemon audit entry) pass any server filter. */
  matches(event: CofferEvent): boolean {
    if (this.types && !this.types.has(event.type)) return false;
    if (this.servers) {
      const server = eventServer(event);
      if (server !== null && !this.servers.has(server)) return false;
    }
    return true;
  }
}
