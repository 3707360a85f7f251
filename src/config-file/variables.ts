// `${VAR}` in a config file: read from coffer's environment where the value
// ends up sealed (a stdio server's env values and args, an HTTP server's
// header and OAuth client values), refused anywhere else, since those fields are stored and
// shown in clear. `$${` is a literal `${`. Pure: the environment is passed in.

export interface PathIssue {
  path: (string | number)[];
  message: string;
}

/** A secret field's text as written, when it holds a reference: what `config export` writes back instead of the value. */
export interface DeclaredSecrets {
  env: Record<string, string>;
  headers: Record<string, string>;
  oauth: Record<string, string>;
  /** By position; null where the argument holds no reference. */
  args: (string | null)[];
}

export interface Expanded {
  value: unknown;
  issues: PathIssue[];
  /** Per entry of `servers`, by index. */
  declared: DeclaredSecrets[];
}

const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export const hasReference = (text: string): boolean => /\$\{/.test(text);

/** The string with its references replaced, or the problems (named variables only, never values). */
function expandString(text: string, env: NodeJS.ProcessEnv, path: PathIssue['path'], issues: PathIssue[]): string {
  return text.replace(REFERENCE, (match, name: string | undefined) => {
    if (name === undefined) return '${';
    if (!VARIABLE_NAME.test(name)) {
      issues.push({ path, message: `"${match}" is not a variable reference (\${NAME}: letters, digits, "_"); write $\${ for a literal \${` });
      return match;
    }
    const value = env[name];
    if (value === undefined) issues.push({ path, message: `\${${name}} is not set in coffer's environment` });
    return value ?? match;
  });
}

/** Strings outside the secret fields: a reference there would be stored in clear, so it is refused. */
function refuseReferences(value: unknown, path: PathIssue['path'], issues: PathIssue[]): unknown {
  if (typeof value === 'string') {
    const unescaped = value.replace(/\$\$\{/g, '');
    if (/\$\{/.test(unescaped)) {
      issues.push({ path, message: '${VAR} is only read in transport env, headers, oauth and args (the values coffer keeps sealed); write $${ for a literal ${' });
    }
    return value.replace(/\$\$\{/g, '${');
  }
  if (Array.isArray(value)) return value.map((item, index) => refuseReferences(item, [...path, index], issues));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, refuseReferences(item, [...path, key], issues)]));
  return value;
}

function expandMap(map: unknown, path: PathIssue['path'], env: NodeJS.ProcessEnv, issues: PathIssue[], declared: Record<string, string>): unknown {
  if (!isObject(map)) return map;
  return Object.fromEntries(
    Object.entries(map).map(([key, item]) => {
      if (typeof item !== 'string') return [key, item];
      if (hasReference(item)) declared[key] = item;
      return [key, expandString(item, env, [...path, key], issues)];
    }),
  );
}

function expandServer(server: unknown, index: number, env: NodeJS.ProcessEnv, issues: PathIssue[]): { value: unknown; declared: DeclaredSecrets } {
  const declared: DeclaredSecrets = { env: {}, headers: {}, oauth: {}, args: [] };
  const path = ['servers', index];
  if (!isObject(server) || !isObject(server.transport)) return { value: refuseReferences(server, path, issues), declared };
  const { transport, ...rest } = server;
  const { env: envMap, headers, oauth, args, ...plain } = transport;
  const at = [...path, 'transport'];
  const expanded: Json = refuseReferences(plain, at, issues) as Json;
  if (envMap !== undefined) expanded.env = expandMap(envMap, [...at, 'env'], env, issues, declared.env);
  if (headers !== undefined) expanded.headers = expandMap(headers, [...at, 'headers'], env, issues, declared.headers);
  if (oauth !== undefined) expanded.oauth = expandMap(oauth, [...at, 'oauth'], env, issues, declared.oauth);
  if (args !== undefined) {
    expanded.args = !Array.isArray(args)
      ? args
      : args.map((arg: unknown, position) => {
          if (typeof arg !== 'string') return arg;
          declared.args[position] = hasReference(arg) ? arg : null;
          return expandString(arg, env, [...at, 'args', position], issues);
        });
  }
  return { value: { ...(refuseReferences(rest, path, issues) as Json), transport: expanded }, declared };
}

/** The document with every reference in a secret field read from `env`. */
export function expandVariables(document: unknown, env: NodeJS.ProcessEnv): Expanded {
  const issues: PathIssue[] = [];
  if (!isObject(document) || !Array.isArray(document.servers)) return { value: refuseReferences(document, [], issues), issues, declared: [] };
  const { servers, ...rest } = document;
  const results = servers.map((server, index) => expandServer(server, index, env, issues));
  return {
    value: { ...(refuseReferences(rest, [], issues) as Json), servers: results.map((result) => result.value) },
    issues,
    declared: results.map((result) => result.declared),
  };
}
