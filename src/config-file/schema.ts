// The config file as a zod schema: each entry of `servers` is exactly what
// POST /api/v1/servers takes (the same schema validates both), so a file entry
// and an API body never drift apart. The JSON Schema published in the repo
// (schema/coffer-config.schema.json) is generated from it.
import { z } from 'zod';
import { prefixOf } from '../protocol/server-config.js';
import { serverConfigSchema } from '../registry/server-config-schema.js';

export const CONFIG_FILE_VERSION = 1;

/** Where the generated JSON Schema is committed, relative to the repository root. */
export const CONFIG_SCHEMA_PATH = 'schema/coffer-config.schema.json';

const servers = z
  .array(serverConfigSchema, { error: 'must be a list of servers' })
  .superRefine((list, ctx) => {
    // The registry's own rules (unique names, unique prefixes), checked here so the file points at the line.
    const byName = new Map<string, number>();
    const byPrefix = new Map<string, number>();
    list.forEach((server, index) => {
      // Entries that failed their own schema have been reported already.
      if (typeof server !== 'object' || server === null || typeof server.name !== 'string') return;
      const name = byName.get(server.name);
      if (name !== undefined) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `repeats the server name "${server.name}" of servers[${name}]` });
      else byName.set(server.name, index);
      const prefix = prefixOf(server);
      const other = byPrefix.get(prefix);
      if (other !== undefined && name === undefined) {
        ctx.addIssue({ code: 'custom', path: [index, server.namespace === '' ? 'name' : 'namespace'], message: `"${prefix}" is already the prefix of servers[${other}] ("${list[other]!.name}"); choose another namespace` });
      } else byPrefix.set(prefix, index);
    });
  })
  .default(() => [])
  .describe('the upstream servers; each entry takes the fields of POST /api/v1/servers. ${VAR} in transport env, headers and args is read from the environment of coffer');

export const configFileSchema = z.strictObject(
  {
    $schema: z.string({ error: 'must be a string' }).optional().describe('for editors: the JSON Schema of this file'),
    version: z.literal(CONFIG_FILE_VERSION, { error: `must be ${CONFIG_FILE_VERSION}` }).describe('the format of this file'),
    servers,
    toolsets: z
      .never({ error: 'is not supported yet by this version of coffer: remove the section' })
      .optional()
      .describe('reserved for toolsets'),
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
