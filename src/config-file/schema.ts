// The config file as a zod schema: each entry of `servers` is exactly what
// POST /api/v1/servers takes (the same schema validates both), so a file entry
// and an API body never drift apart. The JSON Schema published in the repo
// (schema/coffer-config.schema.json) is generated from it.
import { z } from 'zod';
import { prefixOf } from '../protocol/server-config.js';
import { serverConfigSchema } from '../registry/server-config-schema.js';
import { toolsetSpecSchema } from '../toolsets/spec.js';

export const CONFIG_FILE_VERSION = 1;

/** Where the generated JSON Schema is committed, relative to the repository root. */
export const CONFIG_SCHEMA_PATH = 'schema/coffer-config.schema.json';

/** Reports an entry whose name an earlier entry has; answers whether the name was new. */
function firstOfName(seen: Map<string, number>, name: string, index: number, what: string, ctx: z.RefinementCtx): boolean {
  const other = seen.get(name);
  if (other === undefined) seen.set(name, index);
  else ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `repeats the ${what} name "${name}" of ${what}s[${other}]` });
  return other === undefined;
}

const servers = z
  .array(serverConfigSchema, { error: 'must be a list of servers' })
  .superRefine((list, ctx) => {
    // The registry's own rules (unique names, unique prefixes), checked here so the file points at the line.
    const byName = new Map<string, number>();
    const byPrefix = new Map<string, number>();
    list.forEach((server, index) => {
      // Entries that failed their own schema have been reported already.
      if (typeof server !== 'object' || server === null || typeof server.name !== 'string') return;
      const fresh = firstOfName(byName, server.name, index, 'server', ctx);
      const prefix = prefixOf(server);
      const other = byPrefix.get(prefix);
      if (other !== undefined && fresh) {
        ctx.addIssue({ code: 'custom', path: [index, server.namespace === '' ? 'name' : 'namespace'], message: `"${prefix}" is already the prefix of servers[${other}] ("${list[other]!.name}"); choose another namespace` });
      } else byPrefix.set(prefix, index);
    });
  })
  .default(() => [])
  .describe('the upstream servers; each entry takes the fields of POST /api/v1/servers. ${VAR} in transport env, headers, oauth and args is read from the environment of coffer');

const toolsets = z
  .array(toolsetSpecSchema, { error: 'must be a list of toolsets' })
  .superRefine((list, ctx) => {
    const byName = new Map<string, number>();
    list.forEach((toolset, index) => {
      if (typeof toolset === 'object' && toolset !== null && typeof toolset.name === 'string') firstOfName(byName, toolset.name, index, 'toolset', ctx);
    });
  })
  .default(() => [])
  .describe('named views over the servers, served at /mcp/<name>; each entry takes the fields of POST /api/v1/toolsets, and each rule names a server of this file or one registered');

export const configFileSchema = z.strictObject(
  {
    $schema: z.string({ error: 'must be a string' }).optional().describe('for editors: the JSON Schema of this file'),
    version: z.literal(CONFIG_FILE_VERSION, { error: `must be ${CONFIG_FILE_VERSION}` }).describe('the format of this file'),
    servers,
    toolsets,
  },
  { error: 'must be an object with "version" and "servers"' },
);

export type ConfigFile = z.output<typeof configFileSchema>;

/** The JSON Schema of the file as a user writes it (defaults optional). */
export function configFileJsonSchema(): Record<string, unknown> {
  return {
    title: 'coffer config file (coffer serve --config FILE)',
    ...z.toJSONSchema(configFileSchema, { io: 'input', unrepresentable: 'any' }),
  };
}

/** The committed file's exact text. */
export const configFileJsonSchemaText = (): string => `${JSON.stringify(configFileJsonSchema(), null, 2)}\n`;
