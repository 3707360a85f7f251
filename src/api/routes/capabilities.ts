// /servers/{name}/capabilities, /refresh and /test: the management view of
// ADR-004 (R6, R8), the switches (R10), the user's own words for a tool or
// prompt, refresh (R3) and test connection (R9).
import type { ConnectionTester } from '../../jobs/connection-tester.js';
import { CAPABILITY_TYPES as TYPES, type CapabilityType } from '../../protocol/capabilities.js';
import type { OwnWords, PreferenceChange } from '../../protocol/db.js';
import { CofferError } from '../../protocol/errors.js';
import type { CapabilityService } from '../../registry/capabilities.js';
import type { Registry } from '../../registry/registry.js';
import type { Route } from '../http-api.js';

function invalid(field: string, message: string): CofferError {
  return new CofferError('CONFIG_INVALID', `${field}: ${message}`, { errors: [{ field, message }] });
}

/** `{changes:[{capability_type, capability_key, enabled}]}`, every entry checked. */
export function parseChanges(body: unknown): PreferenceChange[] {
  const changes = (body as { changes?: unknown } | undefined)?.changes;
  if (!Array.isArray(changes) || changes.length === 0) throw invalid('changes', 'must be a non-empty array of {capability_type, capability_key, enabled}');
  return changes.map((change: unknown, index) => {
    const { capability_type, capability_key, enabled } = (change ?? {}) as Record<string, unknown>;
    if (!TYPES.includes(capability_type as CapabilityType)) throw invalid(`changes[${index}].capability_type`, 'must be tool, resource or prompt');
    if (typeof capability_key !== 'string' || capability_key.length === 0) throw invalid(`changes[${index}].capability_key`, 'must be a non-empty string');
    if (typeof enabled !== 'boolean') throw invalid(`changes[${index}].enabled`, 'must be true or false');
    return { capability_type: capability_type as CapabilityType, capability_key, enabled };
  });
}

/** The longest own description: room for a few paragraphs, not a document. */
export const MAX_OWN_DESCRIPTION = 4096;

/** One field of `{name?, description?}`: absent stays, null or "" goes back to the upstream's. */
function ownField(body: Record<string, unknown>, field: 'name' | 'description', max: number): string | null | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return value === undefined ? undefined : null;
  if (typeof value !== 'string' || value.length > max) throw invalid(field, `must be a string of at most ${max} characters, or null (the upstream's own)`);
  return value;
}

/** `{key, name?, description?}`: which tool or prompt, and the user's words for it. */
export function parseOwnWords(body: unknown): { key: string; words: OwnWords } {
  const fields = (body ?? {}) as Record<string, unknown>;
  if (typeof fields.key !== 'string' || fields.key.length === 0) throw invalid('key', "must be the upstream's name of the tool or prompt");
  const words: OwnWords = {};
  const name = ownField(fields, 'name', 64);
  const description = ownField(fields, 'description', MAX_OWN_DESCRIPTION);
  if (name !== undefined) words.name = name;
  if (description !== undefined) words.description = description;
  if (name === undefined && description === undefined) throw invalid('name', 'give name or description (null: the upstream\'s own)');
  return { key: fields.key, words };
}

export function capabilityRoutes(capabilities: CapabilityService, registry: Registry, tester: ConnectionTester): Route[] {
  const toggle = (enabled: boolean): Route['handler'] => async (request, params) => {
    const type = params.type as CapabilityType;
    if (!TYPES.includes(type)) throw new CofferError('RESOURCE_NOT_FOUND', `no capability type '${params.type}': use tool, resource or prompt`);
    const key = (request.body as { key?: unknown } | undefined)?.key;
    if (typeof key !== 'string' || key.length === 0) throw invalid('key', 'must be the capability name or resource URI');
    return { status: 200, body: { preferences: await capabilities.set(params.name!, [{ capability_type: type, capability_key: key, enabled }], request.actor) } };
  };
  return [
    { method: 'GET', pattern: '/servers/:name/capabilities', handler: async (_request, params) => ({ status: 200, body: await capabilities.view(params.name!, false) }) },
    {
      method: 'PATCH',
      pattern: '/servers/:name/capabilities',
      handler: async (request, params) => ({ status: 200, body: { preferences: await capabilities.set(params.name!, parseChanges(request.body), request.actor) } }),
    },
    { method: 'POST', pattern: '/servers/:name/capabilities/:type/enable', handler: toggle(true) },
    { method: 'POST', pattern: '/servers/:name/capabilities/:type/disable', handler: toggle(false) },
    {
      method: 'POST',
      pattern: '/servers/:name/capabilities/:type/words',
      handler: async (request, params) => {
        const type = params.type as CapabilityType;
        if (!TYPES.includes(type)) throw new CofferError('RESOURCE_NOT_FOUND', `no capability type '${params.type}': use tool or prompt`);
        const { key, words } = parseOwnWords(request.body);
        return { status: 200, body: { preference: await capabilities.setOwnWords(params.name!, type, key, words, request.actor) } };
      },
    },
    { method: 'POST', pattern: '/servers/:name/refresh', handler: async (_request, params) => ({ status: 200, body: await capabilities.view(params.name!, true) }) },
    {
      method: 'POST',
      pattern: '/servers/:name/test',
      handler: async (_request, params) => {
        const config = registry.config(params.name!);
        if (!config) throw new CofferError('RESOURCE_NOT_FOUND', `no server named '${params.name}': see 'coffer mcp list'`);
        return { status: 200, body: await tester.test(config) };
      },
    },
  ];
}
