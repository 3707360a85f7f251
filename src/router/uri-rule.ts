// Which switch governs a resource URI (R10). Pure.
//
// A client may spell one resource many ways (`DEMO://x`, `demo://x/./a`,
// `demo://x/b/../a`, `%61`), and upstreams read it after normalising, so the
// switch is looked up on the normalised URI (RFC 3986 §6.2.2) and that form is
// what goes upstream: the string gated is the string read. The rule: the
// resource's own switch, else the switch of every resource template that
// matches it (RFC 6570, as the SDK's servers match), else the server's policy.
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

interface TemplateSwitch {
  key: string;
  template: UriTemplate | null;
  enabled: boolean;
}

/** One server's resource and template switches (both are keyed as resources), ready to answer for any URI. */
export class ResourceSwitches {
  private readonly resources = new Map<string, ResourceSwitch>();
  private readonly templates: TemplateSwitch[] = [];

  constructor(switches: Iterable<readonly [key: string, enabled: boolean]>) {
    for (const [key, enabled] of switches) {
      if (UriTemplate.isTemplate(key)) {
        this.templates.push({ key, template: parseTemplate(key), enabled });
        continue;
      }
      const normalised = normaliseUri(key);
      // Two keys that are one resource: it is readable only if both are enabled.
      const known = this.resources.get(normalised);
      if (!known || (known.enabled && !enabled)) this.resources.set(normalised, { by: 'resource', key, enabled });
    }
  }

  /**
   * The switch that governs `uri` (normalised here), or null when none does
   * (then the server's policy does). A template's own key (completion of a
   * template) is governed by that template's switch.
   */
  governing(uri: string): ResourceSwitch | null {
    const own = this.templates.find((entry) => entry.key === uri);
    if (own) return { by: 'template', key: own.key, enabled: own.enabled };
    const normalised = normaliseUri(uri);
    const resource = this.resources.get(normalised);
    if (resource) return resource;
    // Several templates may match: a URI is readable only if none of them is disabled.
    const matching = this.templates.filter((entry) => entry.template?.match(normalised));
    const chosen = matching.find((entry) => !entry.enabled) ?? matching[0];
    return chosen ? { by: 'template', key: chosen.key, enabled: chosen.enabled } : null;
  }
}

/** A template the SDK cannot parse matches nothing (the upstream could not serve it either). */
function parseTemplate(key: string): UriTemplate | null {
  try {
    return new UriTemplate(key);
  } catch {
    return null;
  }
}
