// The header arguments of this upstream's tools: one per actor (worker, i.e.
// per upstream), filled by every tools/list of a modern connection and read by
// every call to it, so it outlives a reconnect.
import { ToolHeaderParams } from '../../src/protocol/mcp-param-headers.js';

export const toolHeaderParams = new ToolHeaderParams();
