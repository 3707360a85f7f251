// One top-level command (a group such as `mcp` or `daemon`): adding one is a new
// file under commands/ plus one line in main.ts's list.
import type { ExitCode } from './exit-codes.js';

export interface Command {
  name: string;
  /** One line for `coffer --help`. */
  summary: string;
  /** Full help of the command, printed for `coffer <name> --help`. */
  usage: string;
  run(argv: string[]): Promise<ExitCode>;
}
