// The official MCP Inspector CLI (@modelcontextprotocol/inspector-cli) lists and
// calls a fixture's tool through coffer: over Streamable HTTP at /mcp, and over
// stdio through `coffer shim`. A client nobody here wrote, both entry points.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { readDaemonFile } from '../src/daemon/daemon-file.js';
import { EXIT } from '../src/cli/exit-codes.js';
import { CLI_ENTRY, PROJECT_ROOT } from '../src/paths.js';
import { fixtureLine, startCliDaemon } from './helpers/cli.js';

const INSPECTOR_BUILD = join(PROJECT_ROOT, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');

interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `mcp-inspector-cli --cli TARGET... ARGS` (its bin is build/cli.js). It runs in its own build folder:
 * 1.0.3 checks for "../package.json" against the working directory but imports it relative to itself,
 * so from anywhere else it fails before connecting.
 */
function inspector(home: string, target: string[], ...args: string[]): Promise<InspectorRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(INSPECTOR_BUILD, 'cli.js'), '--cli', ...target, ...args],
      { cwd: INSPECTOR_BUILD, env: { ...process.env, COFFER_HOME: home }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Its answer: the result as JSON on stdout (the deprecation banner goes to stderr). */
function answer(t: Test, run: InspectorRun): any {
  t.equal(run.code, 0, 'the inspector exits 0', { stderr: run.stderr });
  return JSON.parse(run.stdout);
}

t.test('inspector-cli through /mcp and through coffer shim', async (t) => {
  const { home, port, cli, waitReady } = await startCliDaemon(t, 'coffer-inspector-');
  const added = await cli('mcp', 'add', 'up', '--stdio', fixtureLine('--name', 'up', '--tools', 'echo,whoami'));
  t.equal(added.code, EXIT.OK, added.stderr);
  await waitReady('up');

  const entryPoints: [string, string[]][] = [
    ['Streamable HTTP /mcp', [`http://127.0.0.1:${port}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${readDaemonFile(home)!.token}`]],
    ['stdio coffer shim', [process.execPath, CLI_ENTRY, 'shim']],
  ];
  for (const [label, target] of entryPoints) {
    await t.test(label, async (t) => {
      // Three separate inspector runs (each one connects, does one thing, exits); independent, so at once.
      const [list, call, unknown] = await Promise.all([
        inspector(home, target, '--method', 'tools/list'),
        // --tool-arg values are JSON-typed by the inspector: count=3 arrives as a number.
        inspector(home, target, '--method', 'tools/call', '--tool-name', 'up__echo', '--tool-arg', 'message=hello', 'count=3'),
        inspector(home, target, '--method', 'tools/call', '--tool-name', 'up__missing'),
      ]);
      t.same(
        answer(t, list).tools.map((tool: { name: string }) => tool.name),
        ['up__echo', 'up__whoami'],
        'tools/list: the namespaced tools of the upstream',
      );
      const called = answer(t, call);
      t.same(called.structuredContent, { message: 'hello', count: 3 }, 'tools/call: the arguments reached the upstream unchanged');
      t.same(called.content, [{ type: 'text', text: JSON.stringify({ message: 'hello', count: 3 }) }], 'tools/call: the content came back unchanged');
      t.not(unknown.code, 0, 'a call to an unknown tool fails the inspector');
      t.match(unknown.stderr, /-32602/, 'with the invalid-params error coffer answered');
    });
  }
});
