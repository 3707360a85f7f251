// Bounds on one MCP message that hold on both sides of coffer: in the actors,
// the shim and the main thread.

/**
 * The largest single MCP message coffer reads from a peer (one stdio line, one
 * SSE event, one JSON body), in UTF-16 code units: it matches the largest body
 * coffer accepts from a client on /mcp, and an actor worker's heap holds a
 * message several times over (text, parsed, cloned).
 */
export const MAX_MESSAGE_CHARS = 64 * 1024 * 1024;

/**
 * The deepest an upstream's value may nest (objects and arrays, counted from
 * the value itself: a call result, one list item, a notification's or a
 * request's params). Past it the value never crosses to the main thread, nor
 * a client's request to an actor: structuredClone, JSON.stringify and the
 * SDK's validators all recurse, and fail somewhere between 5,000 and 12,000
 * levels. 128 is serde_json's recursion limit, so an MCP server or client
 * written in Rust could not exchange anything deeper anyway; real schemas and
 * results nest a few dozen levels at most.
 */
export const MAX_DEPTH = 128;
