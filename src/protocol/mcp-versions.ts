// The MCP protocol versions coffer speaks, newest first: the same list as the
// SDK's (test/client-routing.test.ts checks), kept here because the actor
// worker must not load the SDK's zod-heavy types module just for two constants.
export const LATEST_PROTOCOL_VERSION = '2025-11-25';
/** The 2026-07-28 era: metadata per request, no initialize. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];
