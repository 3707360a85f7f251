// One line of text per live event, for the activity panel. Pure.
import { healthLabel, type Tone } from './format.js';
import type { CofferEvent } from './types.js';

export interface EventLine {
  at: string;
  /** Short label: health, list, discovery, call, ... */
  label: string;
  server: string | null;
  text: string;
  tone: Tone;
}

export function eventLine(event: CofferEvent): EventLine {
  switch (event.type) {
    case 'health':
      return { at: event.at, label: 'health', server: event.server, text: `${event.state}${event.last_error ? ` — ${event.last_error}` : ''}`, tone: healthLabel(event).tone };
    case 'list_changed':
      return { at: event.at, label: 'list', server: event.server, text: `${event.kind} list changed`, tone: 'busy' };
    case 'degraded':
      return { at: event.at, label: 'degraded', server: event.server, text: `left out of ${event.kind}: ${event.reason}`, tone: 'bad' };
    case 'recovered':
      return { at: event.at, label: 'recovered', server: event.server, text: `answers ${event.kind} again`, tone: 'ok' };
    case 'server':
      return { at: event.at, label: 'server', server: event.server, text: event.action, tone: 'busy' };
    case 'preference':
      return { at: event.at, label: 'switch', server: event.server, text: `${event.capability_type} ${event.capability_key} ${event.enabled ? 'enabled' : 'disabled'}`, tone: event.enabled ? 'ok' : 'off' };
    case 'words':
      return { at: event.at, label: 'words', server: event.server, text: `${event.capability_type} ${event.capability_key}: ${event.own_name === null ? 'own name cleared' : `named ${event.own_name}`}${event.own_description === null ? '' : ', own description'}`, tone: 'busy' };
    case 'audit': {
      const { entry } = event;
      // First sightings are discovery; the rest is the lifecycle log.
      const key = typeof entry.payload.key === 'string' ? ` ${entry.payload.key}` : '';
      return { at: entry.at, label: entry.event_type.includes('first_seen') ? 'discovery' : 'audit', server: entry.server, text: `${entry.event_type.replaceAll('_', ' ')}${key} (by ${entry.actor})`, tone: 'busy' };
    }
    case 'namespace_collision':
      return { at: event.at, label: 'collision', server: event.server, text: `${event.kind}: '${event.original}' is exposed as '${event.exposed}'`, tone: 'busy' };
    case 'config_file': {
      const changes: [string, string[]][] = [
        ['added', event.added],
        ['updated', event.updated],
        ['removed', event.removed],
        ['toolsets added', event.toolsets.added],
        ['toolsets updated', event.toolsets.updated],
        ['toolsets removed', event.toolsets.removed],
      ];
      const applied = changes.filter(([, names]) => names.length > 0).map(([what, names]) => `${what} ${names.join(', ')}`).join('; ') || 'nothing changed';
      const first = event.errors[0];
      const text =
        event.status === 'applied' ? `${event.path} applied: ${applied}` : event.status === 'refused' && first ? `${event.path} refused at line ${first.line}, column ${first.column}: ${first.field}: ${first.message}` : `${event.path}: ${event.message ?? event.status}`;
      return { at: event.at, label: 'config', server: null, text, tone: event.status === 'applied' ? 'ok' : 'bad' };
    }
    case 'invocation': {
      const { invocation } = event;
      return { at: invocation.at, label: 'call', server: invocation.server, text: `${invocation.kind} ${invocation.key}: ${invocation.status} in ${invocation.duration_ms} ms`, tone: invocation.status === 'ok' ? 'ok' : 'bad' };
    }
    case 'toolset':
      return { at: event.at, label: 'toolset', server: null, text: `toolset ${event.toolset} ${event.action}`, tone: 'busy' };
    case 'client_bound':
      return { at: event.at, label: 'client', server: null, text: `client ${event.client} sees ${event.toolset === null ? 'the whole surface' : `toolset ${event.toolset}`}`, tone: 'busy' };
  }
}
