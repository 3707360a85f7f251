// A JSON-RPC error raised while handling a downstream request; the dispatcher
// turns it into the error response. `data.code` carries coffer's stable code.
import { JSONRPC, type ErrorCode, type JsonRpcErrorBody } from '../protocol/errors.js';

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  static from(body: JsonRpcErrorBody): RpcError {
    return new RpcError(body.code, body.message, body.data);
  }

  static coffer(rpcCode: number, code: ErrorCode, message: string, extra: Record<string, unknown> = {}): RpcError {
    return new RpcError(rpcCode, message, { code, ...extra });
  }

  /** Invalid params, with the stable code every refusal of coffer's carries. */
  static invalidParams(message: string): RpcError {
    return RpcError.coffer(JSONRPC.INVALID_PARAMS, 'BAD_REQUEST', message);
  }

  toBody(): JsonRpcErrorBody {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}
