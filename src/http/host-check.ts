// DNS-rebinding protection: a browser page on a foreign site can reach
// 127.0.0.1 through a name it controls, so the Host and Origin headers must
// name this machine's loopback. Pure.

const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

function hostnameOf(hostHeader: string): { hostname: string; port: string } | null {
  const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(hostHeader.trim());
  if (!match) return null;
  return { hostname: match[1]!.toLowerCase(), port: match[2] ?? '' };
}

/** The Host header must be a loopback name with our port (or no port for :80, which we never use). */
export function isAllowedHost(hostHeader: string | undefined, port: number): boolean {
  if (!hostHeader) return false;
  const parsed = hostnameOf(hostHeader);
  return parsed !== null && LOOPBACK_HOSTNAMES.has(parsed.hostname) && parsed.port === String(port);
}

/** No Origin (non-browser clients) is fine; a present one must be http(s) on a loopback name. */
export function isAllowedOrigin(originHeader: string | undefined): boolean {
  if (originHeader === undefined || originHeader === '') return true;
  try {
    const origin = new URL(originHeader);
    return (origin.protocol === 'http:' || origin.protocol === 'https:') && LOOPBACK_HOSTNAMES.has(origin.hostname.toLowerCase());
  } catch {
    return false;
  }
}
