// The REST API (/api/v1) from the page, with the session's token. Errors keep
// the daemon's envelope so views show its messages verbatim.
import { parseErrorEnvelope } from '../../src/protocol/errors.js';
import type { FieldError } from './types.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
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

export class Api {
  constructor(
    private readonly token: string,
    /** Called on 401: the token was rotated or the session is stale. */
    private readonly onUnauthenticated: () => void,
  ) {}

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }

  delete(path: string): Promise<void> {
    return this.request<void>('DELETE', path);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        // Changes made here are audited with actor "ui".
        'x-coffer-actor': 'ui',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      const error = await apiErrorOf(response);
      if (error.code === 'UNAUTHENTICATED') this.onUnauthenticated();
      throw error;
    }
    const text = await response.text();
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

/** `/servers/{name}` with the name escaped. */
export const serverPath = (name: string, rest = ''): string => `/servers/${encodeURIComponent(name)}${rest}`;
