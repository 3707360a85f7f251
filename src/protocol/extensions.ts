// The MCP extensions coffer routes between its callers and its upstreams, and
// how a capabilities object declares one (both eras put extensions under
// `capabilities.extensions`, keyed by the extension's id). Pure.

/** The tasks extension of MCP 2026-07-28: tools/call may answer a task, polled with tasks/get. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The methods the tasks extension adds; each names its task in params.taskId. */
export const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** Whether these capabilities (a client's or a server's) declare the extension. */
export function declaresExtension(capabilities: unknown, id: string): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  return typeof extensions === 'object' && extensions !== null && !Array.isArray(extensions) && (extensions as Record<string, unknown>)[id] !== undefined;
}
