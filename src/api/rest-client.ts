// The client side of /api/v1, shared by the web UI's Api and the CLI's
// ApiClient: the verbs over one request(), the request's headers and body, and
// reading a successful answer. Each side sends it its own way (the page to its
// own origin, the CLI to daemon.json's port with a timeout) and turns
// failures into its own errors. No Node imports: the UI bundles this file.

/** Who made a change, for the audit log. */
export type RestActor = 'ui' | 'cli';

export abstract class RestClient {
  abstract request<T>(method: string, path: string, body?: unknown): Promise<T>;

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
}

/** The fetch() options of one call: the token, the audit actor, a JSON body when there is one. */
export function restInit(token: string, actor: RestActor, method: string, body: unknown): RequestInit {
  return {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'x-coffer-actor': actor,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

/** A successful answer's body: parsed JSON, or undefined when empty (204). */
export function restBody<T>(text: string): T {
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
