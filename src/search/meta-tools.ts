// The tools a client sees in search mode instead of the whole surface: one to
// find live tools by what they do, one to call a tool found that way and, for
// a 2025-era session, one to add found tools to that session's own list.
// Their names use coffer's own namespace, which no upstream can take.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { OWN_PREFIX } from '../protocol/server-config.js';
import { namespaceName } from '../router/namespace.js';

export const SEARCH_TOOL = namespaceName(OWN_PREFIX, 'search_tools');
export const CALL_TOOL = namespaceName(OWN_PREFIX, 'call_tool');
export const ADD_TOOLS = namespaceName(OWN_PREFIX, 'add_tools');

/** The most hits one search returns, whatever the caller asks. */
export const MAX_SEARCH_LIMIT = 50;
export const DEFAULT_SEARCH_LIMIT = 8;
/** What a person types, with room to spare: a query's words are worked out on the main thread. */
export const MAX_QUERY_CHARS = 1_024;
/**
 * The most of a tool's title or description a search answer shows: what a model
 * reads to choose a tool, with room to spare. An upstream may write megabytes,
 * which would make every answer that finds the tool that large.
 */
export const MAX_ANSWER_TEXT_CHARS = 8_192;
/** The most tools one coffer__add_tools call adds. */
export const MAX_ADD_TOOLS = 50;
/**
 * The most tools one session adds in all: a session that added every tool it
 * finds would hold the whole surface search mode keeps out of its list.
 */
export const MAX_SESSION_TOOLS = 200;

export const META_TOOLS: Tool[] = [
  {
    name: SEARCH_TOOL,
    title: 'Search tools',
    description:
      'Find tools by what you want to do. Describe the task in plain words; returns the best matching tools with their name, description and input schema. Call one with coffer__call_tool.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', maxLength: MAX_QUERY_CHARS, description: 'What you want to do, e.g. "take a screenshot of a web page"' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, description: `How many tools to return (default ${DEFAULT_SEARCH_LIMIT})` },
      },
      required: ['query'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: 'Call a tool',
    description: 'Call a tool found with coffer__search_tools, by its exact name, with arguments that match its input schema.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The tool name as coffer__search_tools returned it' },
        arguments: { type: 'object', description: "The tool's arguments", additionalProperties: true },
      },
      required: ['name'],
    },
  },
];

/**
 * Only where a session exists (the 2025 era): its list can grow for it alone.
 * The 2026-07-28 era has no sessions, so a list there never varies by caller.
 */
export const SESSION_META_TOOLS: Tool[] = [
  ...META_TOOLS,
  {
    name: ADD_TOOLS,
    title: 'Add tools to this session',
    description:
      `Add tools found with coffer__search_tools to this session's tools/list, by their exact names, so they can be called directly from now on. The list changes for this session only (notifications/tools/list_changed follows). A session adds at most ${MAX_SESSION_TOOLS} tools; coffer__call_tool calls any found tool without adding it.`,
    inputSchema: {
      type: 'object',
      properties: {
        names: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_ADD_TOOLS, description: 'Tool names as coffer__search_tools returned them' },
      },
      required: ['names'],
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
];
