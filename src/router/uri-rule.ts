// Which key governs a resource URI: for its switch (R10) and for its toolsets
// alike. Pure.
//
// A client may spell one resource many ways (`DEMO://x`, `demo://x/./a`,
// `demo://x/b/../a`, `%61`), and upstreams read it after normalising, so the
// key is looked up on the normalised URI (RFC 3986 §6.2.2) and that form is
// what goes upstream: the string gated is the string read. The rule: the
// resource's own key, else every resource template that matches it (RFC 6570,
// as the SDK's servers match), else none (a switch falls back to the server's
// policy).
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';

/** RFC 3986 appendix B. */
const URI_PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(\?[^#]*)?(#.*)?$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** %xx of an unreserved character decoded, every other %xx in upper case (§6.2.2.2). */
function normalisePercents(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/** RFC 3986 §5.2.4. */
export function removeDotSegments(path: string): string {
  let input = path;
  let output = '';
  const popSegment = () => (output = output.slice(0, Math.max(0, output.lastIndexOf('/'))));
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) (input = input.slice(3)), popSegment();
    else if (input === '/..') (input = '/'), popSegment();
    else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', 1);
      const end = next === -1 ? input.length : next;
      output += input.slice(0, end);
      input = input.slice(end);
    }
  }
  return output;
}

/** Lower-cases the host of `userinfo@host:port`; userinfo and port stay as they are. */
function normaliseAuthority(authority: string): string {
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  const colon = hostPort.startsWith('[') ? hostPort.indexOf(':', hostPort.indexOf(']')) : hostPort.indexOf(':');
  const host = colon === -1 ? hostPort : hostPort.slice(0, colon);
  return userinfo + host.toLowerCase() + (colon === -1 ? '' : hostPort.slice(colon));
}

/**
 * Syntax-based normalisation (RFC 3986 §6.2.2): scheme and host in lower case,
 * percent-encoding normalised, dot segments removed from the path of an absolute
 * URI. A relative reference keeps its dot segments: they are not resolvable here.
 */
export function normaliseUri(uri: string): string {
  const parts = URI_PARTS.exec(normalisePercents(uri));
  if (!parts) return uri;
  const [, scheme, authority, path = '', query = '', fragment = ''] = parts;
  const head = scheme === undefined ? '' : `${scheme.toLowerCase()}:`;
  const auth = authority === undefined ? '' : `//${normaliseAuthority(authority)}`;
  return head + auth + (scheme === undefined ? path : removeDotSegments(path)) + query + fragment;
}

export type ResourceSwitch = { by: 'resource' | 'template'; key: string; enabled: boolean };

interface TemplateKey {
  key: string;
  template: UriTemplate | null;
}

/**
 * One server's known resource and template keys (both are keyed as
 * resources), ready to say which governs any URI. What a key's answer is
 * comes from the asker: the switches, or a toolset's patterns, so both decide
 * a URI by the same key.
 */
export class ResourceKeys {
  /** Per normalised URI, every key that spells it. */
  private readonly resources = new Map<string, string[]>();
  private readonly templates: TemplateKey[] = [];

  constructor(keys: Iterable<string>) {
    for (const key of keys) {
      if (UriTemplate.isTemplate(key)) this.templates.push({ key, template: parseTemplate(key) });
      else {
        const normalised = normaliseUri(key);
        const spellings = this.resources.get(normalised);
        if (spellings) spellings.push(key);
        else this.resources.set(normalised, [key]);
      }
    }
  }

  /**
   * The key that governs `uri` (normalised here) and whether it `holds`, or
   * null when no key does (then the asker's fallback does). A template's own
   * key (completion of a template) is governed by that template.
   */
  governing(uri: string, holds: (key: string) => boolean): ResourceSwitch | null {
    const own = this.templates.find((entry) => entry.key === uri);
    if (own) return { by: 'template', key: own.key, enabled: holds(own.key) };
    const normalised = normaliseUri(uri);
    const spellings = this.resources.get(normalised);
    if (spellings) return firstFailing('resource', spellings, holds);
    const matching = this.templates.filter((entry) => entry.template?.match(normalised)).map((entry) => entry.key);
    return matching.length > 0 ? firstFailing('template', matching, holds) : null;
  }
}

/** Several keys govern one URI (two spellings of a resource, several matching templates): it holds only if all of them do. */
function firstFailing(by: ResourceSwitch['by'], keys: string[], holds: (key: string) => boolean): ResourceSwitch {
  const key = keys.find((candidate) => !holds(candidate)) ?? keys[0]!;
  return { by, key, enabled: holds(key) };
}

/** A template the SDK cannot parse matches nothing (the upstream could not serve it either). */
function parseTemplate(key: string): UriTemplate | null {
  try {
    return new UriTemplate(key);
  } catch {
    return null;
  }
}
