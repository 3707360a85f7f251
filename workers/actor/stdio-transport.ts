// stdio upstream: spawns the child and speaks newline-delimited JSON on its
// stdin/stdout. Lines that are not JSON are reported (onerror), not fatal; the
// child's stderr goes to the actor's log. Closing follows the MCP spec: stdin
// EOF, then SIGTERM after 2 s, then SIGKILL after 2 s more.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';

export interface StdioOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Where the child's stderr goes (never ended by the child). */
  stderr: Writable;
}

const CLOSE_STEP_MS = 2_000;
/** How much of a non-JSON line goes into the error. */
const LINE_EXCERPT = 120;

/** Splits text into lines across chunks; pure, exported for tests. */
export class LineSplitter {
  private rest = '';

  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const lines: string[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
      lines.push(line);
      start = end + 1;
    }
    this.rest = start === 0 ? text : text.slice(start);
    return lines;
  }

  clear(): void {
    this.rest = '';
  }
}

/** Parses one line as a JSON-RPC message object, or throws an Error saying why not. */
export function parseLine(line: string): JsonRpcMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    const excerpt = line.length > LINE_EXCERPT ? `${line.slice(0, LINE_EXCERPT)}…` : line;
    throw new Error(`not a JSON-RPC message on stdout: ${JSON.stringify(excerpt)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON-RPC message object on stdout');
  return value as JsonRpcMessage;
}

export class StdioTransport implements MessageTransport {
  onmessage?: (message: JsonRpcMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private child: ChildProcess | undefined;
  private readonly lines = new LineSplitter();
  private finished = false;
  private started = false;

  constructor(private readonly options: StdioOptions) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error('stdio transport already started'));
    this.started = true;
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, this.options.args, {
        env: this.options.env,
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        if (this.child === child) this.child = undefined;
        this.finish();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => this.receive(chunk));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stderr!.pipe(this.options.stderr, { end: false });
    });
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.onclose?.();
  }

  private receive(chunk: string): void {
    for (const line of this.lines.push(chunk)) {
      if (line.trim() === '') continue;
      let message: JsonRpcMessage;
      try {
        message = parseLine(line);
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      this.onmessage?.(message);
    }
  }

  send(message: JsonRpcMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.lines.clear();
    if (!child) {
      // Never started, or already exited: nothing to wait for.
      if (this.finished || !this.started) this.finish();
      return;
    }
    const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const step = (): Promise<void> => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_STEP_MS).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    await step();
    if (!gone()) {
      child.kill('SIGTERM');
      await step();
    }
    if (!gone()) child.kill('SIGKILL');
  }
}
