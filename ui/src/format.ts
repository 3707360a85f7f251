// How values read on screen: health, transports, times. Pure.
import type { ProtocolSetting, ServerHealth, SessionMode, TransportConfig } from './types.js';

/** CSS modifier of a badge or activity line. */
export type Tone = 'ok' | 'busy' | 'bad' | 'off';

export interface HealthLabel {
  text: string;
  tone: Tone;
}

const HEALTH: Record<string, HealthLabel> = {
  ready: { text: 'ready', tone: 'ok' },
  connecting: { text: 'connecting', tone: 'busy' },
  backoff: { text: 'backing off', tone: 'bad' },
  failed: { text: 'failed (crash loop)', tone: 'bad' },
  needs_auth: { text: 'needs sign-in', tone: 'bad' },
  stopped: { text: 'stopped', tone: 'off' },
  disabled: { text: 'disabled', tone: 'off' },
};

export function healthLabel(health: Pick<ServerHealth, 'state'>): HealthLabel {
  return HEALTH[health.state] ?? { text: health.state, tone: 'busy' };
}

export function transportSummary(transport: TransportConfig): string {
  if (transport.type === 'stdio') return [transport.command, ...transport.args].join(' ');
  return transport.url;
}

/** One line on what each session mode means (the README's table, shortened). */
export const SESSION_MODE_TEXT: Record<SessionMode, string> = {
  shared: 'one upstream connection for every client session',
  per_session: "one connection per client session: the client's own roots, log level and subscriptions",
};

/** One line on each protocol setting; its keys are exactly the values the API takes (the config schema's type). */
export const PROTOCOL_TEXT: Record<ProtocolSetting, string> = {
  auto: 'probe with server/discover (2026-07-28), fall back to initialize (2025-11-25)',
  '2025-11-25': 'speak only the 2025-11-25 era (initialize)',
  '2026-07-28': 'speak only the 2026-07-28 era; fails when the upstream does not offer it',
};
export const PROTOCOLS = Object.keys(PROTOCOL_TEXT) as ProtocolSetting[];

/** The setting and, once connected, what the upstream negotiated: `auto · speaking 2025-11-25 (legacy era)`. */
export function protocolSummary(setting: ProtocolSetting, health: Pick<ServerHealth, 'protocol_version' | 'era'>): string {
  return health.protocol_version ? `${setting} · speaking ${health.protocol_version} (${health.era} era)` : `${setting} · not connected`;
}

/** How a server's names reach clients: `fs__<name>`, or unprefixed for the empty namespace. */
export function namespaceSummary(namespace: string): string {
  return namespace === '' ? 'none: names pass through unprefixed' : `${namespace}__<name>`;
}

/** `12:03:04` today, else the date and time; local time. */
export function clock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay ? date.toLocaleTimeString() : date.toLocaleString();
}

/** `5 s ago`, `3 min ago`, `2 h ago`, `4 d ago`. */
export function ago(iso: string | null, now = Date.now()): string {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}
