// Light on purpose: the CLI recognises this error without loading the HTTP server.

/** No port to listen on: the one asked for (count 1), or none of the default's range, was free. */
export class PortTakenError extends Error {
  constructor(
    readonly port: number,
    count: number,
    host: string,
  ) {
    super(
      count === 1
        ? `port ${port} on ${host} is already in use by another program. An explicit --port or COFFER_PORT is never moved to another port ` +
            `(clients configured for ${port} would reach that program instead): stop that program or choose another port`
        : `ports ${port}-${port + count - 1} on ${host} are all in use: pass --port or set COFFER_PORT`,
    );
    this.name = 'PortTakenError';
  }
}
