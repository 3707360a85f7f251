// stdio upstream: spawns the child and speaks newline-delimited JSON on its
// stdin/stdout. Lines that are not JSON are reported (onerror), not fatal; the
// child's stderr goes to the actor's log, its controls escaped (the log is
// rotated by size, so it stays bounded however much the child prints). Closing follows the MCP spec: stdin
// EOF, then SIGTERM after 2 s, then SIGKILL after 2 s more; a child that ends its stdout while it runs is closed so. The child leads a process group of its own, and
// the signals go to the group: what it forked (a wrapper's server, a helper) is stopped with it, and once
// the child is gone, whatever it left in its group gets SIGTERM, then SIGKILL 2 s later.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { escapeControls } from '../../src/protocol/untrusted-text.js';
import type { JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';
import { parseInbound, TooDeepError } from './inbound.js';
import { MAX_MESSAGE_CHARS } from '../../src/protocol/message-limit.js';
import { MessageTooLargeError, PartialLine } from './limits.js';
import { signalGroup } from '../../src/supervision/kill-child.js';

export interface StdioOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Where the child's stderr goes (never ended by the child). */
  stderr: Writable;
}

const CLOSE_STEP_MS = 2_000;
/** How long a child whose stdout ended has to be seen exiting before it is taken for one that runs on, deaf. */
const STDOUT_END_GRACE_MS = 1_000;
/** How much of a non-JSON line goes into the error. */
const LINE_EXCERPT = 120;

/**
 * Splits text into lines across chunks; pure, exported for tests. A line
 * longer than `maxChars` is dropped (an Error in its place), and so is the
 * rest of it as it arrives (see PartialLine).
 */
export class LineSplitter {
  private readonly partial = new PartialLine();

  constructor(private readonly maxChars = MAX_MESSAGE_CHARS) {}

  push(chunk: string): Array<string | MessageTooLargeError> {
    const lines: Array<string | MessageTooLargeError> = [];
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      const line = this.complete(chunk.slice(start, end));
      if (line !== null) lines.push(line);
      start = end + 1;
    }
    if (start < chunk.length && this.partial.add(start === 0 ? chunk : chunk.slice(start), this.maxChars)) lines.push(new MessageTooLargeError('stdout line'));
    return lines;
  }

  /** The line that `tail` ends, or null for the end of a dropped one. */
  private complete(tail: string): string | MessageTooLargeError | null {
    const line = this.partial.end(tail);
    if (line === null) return null;
    if (line.length > this.maxChars) return new MessageTooLargeError('stdout line');
    return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
  }

  clear(): void {
    this.partial.clear();
  }
}

/** Parses one line as a JSON-RPC message object, or throws an Error saying why not. */
export function parseLine(line: string): JsonRpcMessage {
  let value: unknown;
  try {
    value = parseInbound(line);
  } catch (error) {
    if (error instanceof TooDeepError) throw error;
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
        // Its own process group, so the group can be signalled: the only handle on grandchildren.
        detached: true,
      });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      // A child that exits (crashed, or asked to) leaves nothing it forked behind; that also ends a
      // grandchild holding the child's stdout, which would keep 'close' (and so onclose) from coming.
      child.once('exit', () => void this.endGroup(child));
      child.on('close', () => {
        if (this.child === child) this.child = undefined;
        // Closed once its group is ended too: whoever waits for the close (a shutdown, then the worker's
        // termination) must not cut the SIGKILL short.
        void this.endGroup(child).then(() => this.finish());
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => this.receive(chunk));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      // A child that ends its stdout can answer nothing more, even if it runs on: it is stopped (its calls fail as
      // the session ends), not left to fail every call at its deadline. A child that exits ends its stdout just
      // before its exit is seen: the exit is given a moment to come first.
      child.stdout!.on('end', () => {
        const deaf = setTimeout(() => {
          if (this.child !== child || child.exitCode !== null || child.signalCode !== null) return;
          this.onerror?.(new Error("the server's stdout ended while it runs: it can answer nothing more, so it is stopped"));
          void this.close();
        }, STDOUT_END_GRACE_MS);
        deaf.unref();
        child.once('exit', () => clearTimeout(deaf));
      });
      // Not pipe(): every child of a per_session upstream shares this log stream, and each pipe keeps its listeners on it
      // for the child's life. Backpressure all the same: a child is paused only while the stream is full.
      const stderr = child.stderr!;
      const log = this.options.stderr;
      // As text, so a character split across chunks is decoded whole before its controls are looked at.
      stderr.setEncoding('utf8');
      stderr.on('data', (chunk: string) => {
        if (log.write(escapeControls(chunk)) || log.destroyed) return;
        stderr.pause();
        // A log stream that fails or closes never drains: the child must not block on its stderr for that.
        const resume = (): void => {
          log.off('drain', resume).off('close', resume);
          stderr.resume();
        };
        log.once('drain', resume).once('close', resume);
      });
    });
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.onclose?.();
  }

  private receive(chunk: string): void {
    for (const line of this.lines.push(chunk)) {
      if (line instanceof Error) {
        this.onerror?.(line);
        continue;
      }
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
    // Settles when the line is flushed or fails (a child that dies mid-write): no 'drain' listener per queued message.
    return new Promise((resolve, reject) => {
      stdin.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
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
    if (gone()) return this.endGroup(child);
    this.signal(child, 'SIGTERM');
    await step();
    // The group had its SIGTERM with the child, and a step to act on it: what is left of it goes now, so a
    // close ends within the connection's wait for it (a worker ended later could no longer send this).
    this.signal(child, 'SIGKILL');
    await this.endGroup(child);
  }

  private signal(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined || !signalGroup(child.pid, signal)) child.kill(signal);
  }

  private readonly groupsEnding = new Map<ChildProcess, Promise<void>>();

  /** What is left of an exited child's process group: SIGTERM, then SIGKILL after a step. Once per child. */
  private endGroup(child: ChildProcess): Promise<void> {
    const pid = child.pid;
    if (pid === undefined) return Promise.resolve();
    let ending = this.groupsEnding.get(child);
    if (!ending) {
      ending = (async () => {
        if (!signalGroup(pid, 'SIGTERM')) return;
        const until = Date.now() + CLOSE_STEP_MS;
        while (Date.now() < until) {
          await new Promise<void>((resolve) => setTimeout(resolve, 50).unref());
          if (!signalGroup(pid, 0)) return;
        }
        signalGroup(pid, 'SIGKILL');
      })();
      this.groupsEnding.set(child, ending);
    }
    return ending;
  }
}
