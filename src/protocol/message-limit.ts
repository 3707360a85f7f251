// The largest single MCP message coffer reads from a peer (one stdio line, one
// SSE event, one JSON body), in UTF-16 code units: it matches the largest body
// coffer accepts from a client on /mcp, and an actor worker's heap holds a
// message several times over (text, parsed, cloned).
export const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;
