// What a toolset is, as the user writes it: a name, a description and, per
// server, which of its capabilities are in the set. Patterns name upstream keys
// the way switches do (`tool:<name>`, `prompt:<name>`, `resource:<uri or
// uriTemplate>`), with `*` and `?` as wildcards; nothing of an upstream's own
// lists (schemas, descriptions) is ever stored (R1). Pure.
import { z } from 'zod';
import type { Result } from '../protocol/errors.js';
import { SERVER_NAME_PATTERN } from '../protocol/server-config.js';
import { TOOLSET_NAME_PATTERN, type ToolsetSpec } from '../protocol/toolsets.js';
import { parsePin, PIN_SYNTAX } from '../search/pins.js';
import { parsePattern } from './patterns.js';
import { unwrap } from '../registry/registry.js';
import { fieldErrors, invalid } from '../registry/server-config.js';

export type { ToolsetRecord, ToolsetServerRule, ToolsetSpec } from '../protocol/toolsets.js';

export const PATTERN_SYNTAX = 'tool:<glob>, prompt:<glob> or resource:<glob> (* any characters, ? one)';

const pattern = z.string({ error: 'must be a string' }).refine((text) => parsePattern(text) !== null, { error: `must be ${PATTERN_SYNTAX}` });
const patterns = z.array(pattern, { error: 'must be a list of patterns' }).max(1000, { error: 'at most 1000 patterns' });

const rule = z.strictObject({
  server: z.string({ error: 'must be a string' }).regex(SERVER_NAME_PATTERN, { error: 'must be a registered server name' }),
  include: patterns.optional(),
  exclude: patterns.optional(),
});

/** A toolset as POST /api/v1/toolsets takes it; the config file's `toolsets` entries use the same schema. */
export const toolsetSpecSchema = z.strictObject({
  name: z.string({ error: 'must be a string' }).regex(TOOLSET_NAME_PATTERN, { error: 'must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit' }),
  description: z.string({ error: 'must be a string' }).max(1024, { error: 'at most 1024 characters' }).default(''),
  servers: z
    .array(rule, { error: 'must be a list of {server, include?, exclude?}' })
    .max(1000, { error: 'at most 1000 servers' })
    .refine((rules) => new Set(rules.map((entry) => entry.server)).size === rules.length, { error: 'names a server twice: merge its patterns into one entry' }),
  mode: z.enum(['full', 'search'], { error: 'must be "full" (list the set\'s tools) or "search" (list the search meta-tools)' }).optional(),
  pinned: z
    .array(z.string({ error: 'must be a string' }).refine((text) => parsePin(text) !== null, { error: `must be ${PIN_SYNTAX}` }), { error: 'must be a list of pins' })
    .max(1000, { error: 'at most 1000 pins' })
    .optional(),
}).superRefine((spec, ctx) => {
  // A pin only picks among the set's own tools: one naming a server outside it would silently show nothing.
  const servers = new Set(spec.servers.map((rule) => rule.server));
  spec.pinned?.forEach((text, index) => {
    const server = parsePin(text)?.server;
    if (server !== undefined && !servers.has(server)) ctx.addIssue({ code: 'custom', path: ['pinned', index], message: `names server "${server}", which is not in the set: add a rule for it first` });
  });
});

/** A valid spec with defaults applied, or CONFIG_INVALID naming every field at fault. */
export function parseToolsetSpec(input: unknown): Result<ToolsetSpec> {
  const parsed = toolsetSpecSchema.safeParse(input);
  return parsed.success ? { ok: true, value: parsed.data } : invalid(fieldErrors(parsed.error.issues), 'toolset');
}

/**
 * The `toolset` field of a client's body: a toolset name, or null for the whole
 * surface; absent is null unless `required`. Anything else is CONFIG_INVALID.
 */
export function toolsetField(body: unknown, required: boolean): string | null {
  const toolset = typeof body === 'object' && body !== null ? (body as { toolset?: unknown }).toolset : undefined;
  if (toolset === null || typeof toolset === 'string' || (toolset === undefined && !required)) return toolset ?? null;
  const message = 'must be a toolset name, or null for the whole surface';
  return unwrap(invalid([{ field: 'toolset', message }], 'client'));
}
