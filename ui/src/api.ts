// The REST API (/api/v1) from the page, with the session's token. Errors keep
// the daemon's envelope so views show its messages word for word (their
// controls and bidi marks as text).
import { RestClient, restBody, restInit } from '../../src/api/rest-client.js';
import { parseErrorEnvelope } from '../../src/protocol/errors.js';
import { escapeControls } from '../../src/protocol/untrusted-text.js';
import type { FieldError } from './types.js';

/** The daemon's error; its message can quote an upstream's or a client's text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(escapeControls(message));
  }

  /** details.errors of CONFIG_INVALID. */
  get fieldErrors(): FieldError[] {
    const errors = (this.details as { errors?: unknown } | null | undefined)?.errors;
    return Array.isArray(errors) ? errors.filter((e): e is FieldError => typeof e?.field === 'string' && typeof e?.message === 'string') : [];
  }
}

export async function apiErrorOf(response: Response): Promise<ApiError> {
  const { code, message, details } = parseErrorEnvelope(response.status, await response.text());
  return new ApiError(response.status, code, message, details);
}

export class Api extends RestClient {
  constructor(
    private readonly token: string,
    /** Called on 401: the token was rotated or the session is stale. */
    private readonly onUnauthenticated: () => void,
  ) {
    super();
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    // Changes made here are audited with actor "ui".
    const response = await fetch(`/api/v1${path}`, restInit(this.token, 'ui', method, body));
    if (!response.ok) {
      const error = await apiErrorOf(response);
      if (error.code === 'UNAUTHENTICATED') this.onUnauthenticated();
      throw error;
    }
    return restBody<T>(await response.text());
  }
}

/** `/servers/{name}` with the name escaped. */
export const serverPath = (name: string, rest = ''): string => `/servers/${encodeURIComponent(name)}${rest}`;
