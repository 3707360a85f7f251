// Capability references on the command line: `tool:<name>`, `prompt:<name>`,
// `resource:<uri>` (resource templates too, by their uriTemplate). Split at the
// first ':' only, since a URI has its own.
import { CAPABILITY_TYPES as TYPES, type CapabilityType } from '../protocol/capabilities.js';
import { usageError } from './output.js';

export interface CapabilityRef {
  capability_type: CapabilityType;
  capability_key: string;
}

export const REF_SYNTAX = 'tool:<name>, prompt:<name> or resource:<uri>';

/** One REF; a usage error (exit 2) when malformed. */
export function parseCapabilityRef(ref: string): CapabilityRef {
  const at = ref.indexOf(':');
  const type = at === -1 ? '' : ref.slice(0, at);
  const key = at === -1 ? '' : ref.slice(at + 1);
  if (!(TYPES as readonly string[]).includes(type)) {
    throw usageError(`'${ref}' is not a capability reference: expected ${REF_SYNTAX}`);
  }
  if (key === '') throw usageError(`'${ref}' names no ${type}: expected ${type}:<${type === 'resource' ? 'uri' : 'name'}>`);
  return { capability_type: type as CapabilityType, capability_key: key };
}

/** Every REF checked before any is used; repeats collapse into one. */
export function parseCapabilityRefs(refs: string[]): CapabilityRef[] {
  if (refs.length === 0) throw usageError(`missing REF (${REF_SYNTAX})`);
  const seen = new Set<string>();
  const result: CapabilityRef[] = [];
  for (const ref of refs.map(parseCapabilityRef)) {
    const id = formatCapabilityRef(ref);
    if (seen.has(id)) continue;
    seen.add(id);
    result.push(ref);
  }
  return result;
}

export function formatCapabilityRef(ref: CapabilityRef): string {
  return `${ref.capability_type}:${ref.capability_key}`;
}
