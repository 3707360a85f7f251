// Running the real `coffer` binary as a child process, for the CLI tests.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { CliError } from '../../src/cli/output.js';
import { isProcessAlive } from '../../src/daemon/daemon-file.js';
import { joinCommandLine } from '../../src/cli/split.js';
import { CLI_ENTRY } from '../../src/paths.js';
import { FIXTURE } from '../fixtures/fixture-servers.js';
import { homeApi, waitReady, type RestCall } from './rest.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(home: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, ...args],
      { env: { ...process.env, COFFER_HOME: home, COFFER_PORT: '0' }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A temporary folder removed when the test file ends. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The exit code a parser's CliError carries, or -1 when it did not throw. */
export const usageCode = (fn: () => unknown): number => {
  try {
    fn();
  } catch (error) {
    return (error as CliError).exitCode;
  }
  return -1;
};

/** `--stdio` line of a fixture upstream. */
export const fixtureLine = (...args: string[]): string => joinCommandLine([process.execPath, FIXTURE, ...args]);

export interface CliDaemon {
  home: string;
  pid: number;
  port: number;
  cli(...args: string[]): Promise<CliResult>;
  /** Runs with --json, asserts exit 0, answers the parsed stdout. */
  json(...args: string[]): Promise<any>;
  /** The REST API directly, for what the CLI does not do (homeApi: follows a restart). */
  api: RestCall;
  /** Polls the server's health over REST until it is ready. */
  waitReady(name: string, timeoutMs?: number): Promise<void>;
}

/** `coffer daemon start` in a fresh home, stopped (or killed) when the test ends. */
export async function startCliDaemon(t: Test, prefix: string): Promise<CliDaemon> {
  const home = tempDir(prefix);
  const started = await runCli(home, 'daemon', 'start', '--json');
  t.equal(started.code, EXIT.OK, started.stderr);
  const { pid, port } = JSON.parse(started.stdout) as { pid: number; port: number };
  t.teardown(async () => {
    await runCli(home, 'daemon', 'stop');
    if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  const cli = (...args: string[]): Promise<CliResult> => runCli(home, ...args);
  const json = async (...args: string[]): Promise<any> => {
    const result = await cli(...args, '--json');
    t.equal(result.code, EXIT.OK, `${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };
  const api = homeApi(home);
  return { home, pid, port, cli, json, api, waitReady: (name, timeoutMs) => waitReady(api, name, timeoutMs) };
}
