// The log level each client session asked for with logging/setLevel, and the
// toolset it asked through (pure).
// A session that never asked gets the messages of its own calls; unrelated
// messages go only to sessions that asked, at or above their level.

/** RFC 5424 severities, least severe first, as MCP names them. */
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

const rank = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

/** Whether a message of `level` is at or above `wanted` (a message without a known level always is). */
export function admitsLevel(wanted: LogLevel, level: unknown): boolean {
  return !isLogLevel(level) || rank(level) >= rank(wanted);
}

interface Asked {
  level: LogLevel;
  /** The toolset the session sees (null: the whole surface): unrelated messages of servers outside it are not its to hear. */
  toolset: string | null;
}

export class LogLevels {
  private levels = new Map<string, Asked>();

  set(session: string, level: LogLevel, toolset: string | null = null): void {
    this.levels.set(session, { level, toolset });
  }

  /** The level the session asked for, if it did. */
  of(session: string): LogLevel | undefined {
    return this.levels.get(session)?.level;
  }

  /** The toolset the session asked through (null: none, or it never asked). */
  toolsetOf(session: string): string | null {
    return this.levels.get(session)?.toolset ?? null;
  }

  drop(session: string): void {
    this.levels.delete(session);
  }

  /** The most verbose level any session asked for: what a shared upstream must send. */
  mostVerbose(): LogLevel | null {
    let verbose: LogLevel | null = null;
    for (const { level } of this.levels.values()) if (verbose === null || rank(level) < rank(verbose)) verbose = level;
    return verbose;
  }

  /** Whether a message of `level` goes to `session`; `related`: it belongs to one of the session's calls. */
  admits(session: string, level: unknown, related: boolean): boolean {
    const wanted = this.levels.get(session)?.level;
    if (wanted === undefined) return related;
    return admitsLevel(wanted, level);
  }

  /** Sessions that asked for messages unrelated to their calls. */
  sessions(): string[] {
    return [...this.levels.keys()];
  }
}
