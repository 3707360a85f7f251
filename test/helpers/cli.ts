// Running the real `coffer` binary as a child process, for the CLI tests.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { joinCommandLine } from '../../src/cli/split.js';
import { CLI_ENTRY } from '../../src/paths.js';
import { FIXTURE } from '../fixtures/fixture-servers.js';

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

/** `--stdio` line of a fixture upstream. */
export const fixtureLine = (...args: string[]): string => joinCommandLine([process.execPath, FIXTURE, ...args]);
