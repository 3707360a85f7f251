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

/** A compiled glob: whether a whole name matches it. */
export type Glob = (text: string) => boolean;

/**
 * `*` any run of characters, `?` one; everything else literal; the whole name.
 * Matched by walking both strings, going back only to the last `*`: time is
 * bounded by the lengths' product, where a backtracking RegExp of `*a*a*a*b`
 * takes minutes on a 64-character name.
 */
export function globMatcher(glob: string): Glob {
  return (text) => {
    let at = 0;
    let from = 0;
    let star = -1;
    let resume = 0;
    while (from < text.length) {
      if (at < glob.length && (glob[at] === '?' || glob[at] === text[from])) {
        at += 1;
        from += 1;
      } else if (at < glob.length && glob[at] === '*') {
        star = at;
        at += 1;
        resume = from;
      } else if (star >= 0) {
        at = star + 1;
        resume += 1;
        from = resume;
      } else {
        return false;
      }
    }
    while (glob[at] === '*') at += 1;
    return at === glob.length;
  };
}
