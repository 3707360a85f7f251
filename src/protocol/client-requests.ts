// The server→client requests coffer relays, each with the client capability it
// needs (MCP: a server may send these only to a client that declared it). Any
// other request of an upstream is answered -32601 without reaching a client.
export const RELAYED_CLIENT_REQUESTS: Readonly<Record<string, string>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

/** The capability a relayed request needs; undefined for a request coffer does not relay. */
export function requiredCapability(method: string): string | undefined {
  return Object.hasOwn(RELAYED_CLIENT_REQUESTS, method) ? RELAYED_CLIENT_REQUESTS[method] : undefined;
}
