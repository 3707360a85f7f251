// The tasks extension (io.modelcontextprotocol/tasks) through coffer. An
// upstream's task becomes the caller's under a taskId of coffer's own: the
// upstream's id, its server and the tool, sealed like a requestState (HMAC
// with the daemon's key, bound to the caller's credential, expiring with the
// task's ttlMs), so tasks/get, tasks/update and tasks/cancel reach the server
// that created the task, and a changed, forged or foreign id reaches none.
// Nothing here is cached: a task's state is asked of its upstream each time.
import { JSONRPC } from '../../protocol/errors.js';
import { declaresExtension, TASKS_EXTENSION } from '../../protocol/extensions.js';
import { clipText } from '../../protocol/untrusted-text.js';
import type { Calls, ForwardContext } from '../../router/calls.js';
import { RpcError } from '../rpc-error.js';
import { RequestStateSeal, type StateBinding } from './request-state.js';

/** A task whose upstream names no ttlMs (null: unlimited) is coffer's for this long. */
export const TASK_ID_MAX_TTL_MS = 24 * 60 * 60_000;

/** The binding method of every task id: tasks/get, update and cancel all take it. */
const TASKS_BINDING = 'tasks';
/** Enough of an unknown taskId to tell it in the refusal: the caller may have sent megabytes. */
const SHOWN_TASK_ID_CHARS = 128;

function binding(caller: string): StateBinding {
  return { caller, method: TASKS_BINDING, target: '' };
}

/** How long coffer's id stays good: the upstream's ttlMs when it names one, never past the cap. */
function ttlOf(result: Record<string, unknown>): number {
  const ttl = result.ttlMs;
  return typeof ttl === 'number' && Number.isInteger(ttl) && ttl > 0 ? Math.min(ttl, TASK_ID_MAX_TTL_MS) : TASK_ID_MAX_TTL_MS;
}

export class TaskRoutes {
  constructor(
    private readonly calls: Pick<Calls, 'forwardTask'>,
    private readonly seal = new RequestStateSeal(),
  ) {}

  /** Whether a request declared the extension (per request, in its clientCapabilities). */
  static declared(capabilities: Record<string, unknown>): boolean {
    return declaresExtension(capabilities, TASKS_EXTENSION);
  }

  /** The context's hook that makes an upstream's CreateTaskResult (and each later answer) this caller's. */
  hook(caller: string): NonNullable<ForwardContext['onTask']> {
    return (server, tool, result) => {
      if (typeof result.taskId !== 'string') {
        throw RpcError.coffer(JSONRPC.UPSTREAM_RESPONSE_INVALID, 'UPSTREAM_RESPONSE_INVALID', `${server}: the upstream answered a task without a taskId; tell its maintainers`);
      }
      const taskId = this.seal.seal({ kind: 'task', server, tool, task: result.taskId }, binding(caller), ttlOf(result));
      return { ...result, taskId };
    };
  }

  /** tasks/get, tasks/update or tasks/cancel: to the task's upstream with its own id; its answer names coffer's. */
  async handle(method: string, params: Record<string, unknown>, ctx: ForwardContext): Promise<Record<string, unknown>> {
    if (!TaskRoutes.declared(ctx.capabilities)) {
      throw RpcError.coffer(JSONRPC.MISSING_CLIENT_CAPABILITY, 'MISSING_CLIENT_CAPABILITY', `${method} needs the ${TASKS_EXTENSION} extension: declare it in the request's clientCapabilities.extensions`, {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    if (typeof params.taskId !== 'string') throw RpcError.invalidParams(`${method} needs params.taskId, a string: a taskId as coffer returned it`);
    const handle = this.open(params.taskId, ctx.caller ?? '');
    const result = await this.calls.forwardTask(handle.server, handle.tool, method, { ...params, taskId: handle.task }, ctx);
    return 'taskId' in result ? { ...result, taskId: params.taskId } : result;
  }

  /** The task a caller's id stands for; -32602 TASK_NOT_FOUND (the extension's unknown-task error) for any id coffer did not give this caller. */
  private open(taskId: string, caller: string): { server: string; tool: string; task: string } {
    try {
      const handle = this.seal.open(taskId, binding(caller));
      if (handle.kind === 'task') return handle;
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
    }
    throw RpcError.coffer(JSONRPC.INVALID_PARAMS, 'TASK_NOT_FOUND', `unknown task '${clipText(taskId, SHOWN_TASK_ID_CHARS)}': pass a taskId exactly as coffer returned it, from the same credential, before its ttlMs runs out`);
  }
}
