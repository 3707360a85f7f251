// Hash routes of the page (the server only ever serves `/`). Pure.
import { TABS, type Tab } from './capability-model.js';

export type Route = { page: 'servers' } | { page: 'server'; name: string; tab: Tab } | { page: 'invocations' } | { page: 'toolsets' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'invocations') return { page: 'invocations' };
  if (parts[0] === 'toolsets') return { page: 'toolsets' };
  if (parts[0] === 'servers' && parts[1]) {
    let name: string;
    try {
      name = decodeURIComponent(parts[1]);
    } catch {
      return { page: 'servers' };
    }
    const tab = (TABS as readonly string[]).includes(parts[2] ?? '') ? (parts[2] as Tab) : 'tools';
    return { page: 'server', name, tab };
  }
  return { page: 'servers' };
}
