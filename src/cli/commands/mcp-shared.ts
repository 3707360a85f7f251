// What the `coffer mcp` action files share: the server view the API answers and how it is shown.
import type { ServerConfig, TransportConfig } from '../../protocol/server-config.js';
import { joinCommandLine } from '../split.js';

export interface Health {
  state: string;
  last_error?: string | null;
  protocol_version?: string | null;
  era?: string | null;
}

/** GET /servers/{name}: the config (secret values "[redacted]") and health. */
/** `warnings`: in the answer to an add or update (arguments that look like secrets). */
export type Server = ServerConfig & { health: Health; warnings?: string[] };

export const serverPath = (name: string): string => `/servers/${encodeURIComponent(name)}`;

export function describeTransport(transport: TransportConfig): string {
  return transport.type === 'stdio'
    ? `stdio: ${joinCommandLine([transport.command, ...transport.args])}`
    : `${transport.type}: ${transport.url}`;
}
