// A toolset's capability patterns (`tool:read_*`) and globs, with no schema
// library: the web UI bundles these to show which toolsets hold a capability.
// Pure.
import { CAPABILITY_TYPES, type CapabilityType } from '../protocol/capabilities.js';

export interface CapabilityPattern {
  type: CapabilityType;
  glob: string;
}

/** `tool:read_*` → its type and glob; null when malformed. */
export function parsePattern(text: string): CapabilityPattern | null {
  const at = text.indexOf(':');
  const type = text.slice(0, at) as CapabilityType;
  const glob = text.slice(at + 1);
  return at > 0 && CAPABILITY_TYPES.includes(type) && glob !== '' ? { type, glob } : null;
}

/** `*` any run of characters, `?` one; everything else literal. Anchored. */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 's');
}
