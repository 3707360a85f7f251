// The result model, the printed table and the JSON file of one run.
import { cpus, totalmem } from 'node:os';
import { ratio, round, type Summary } from './stats.js';

export interface Figure {
  /** Where this figure came from: coffer, direct, floor or peer. */
  median: number;
  p99: number;
  n: number;
  summary?: Summary;
}

export interface Row {
  id: string;
  scenario: string;
  unit: string;
  coffer: Figure | null;
  /** The direct path or the floor, whichever the target compares against. */
  base: (Figure & { label: string }) | null;
  peer: Figure | null;
  /** What the target is judged on, e.g. "added median 0.41 ms". */
  headline: string;
  target: string;
  met: boolean | null;
  note?: string;
  extra?: Record<string, unknown>;
}

export const fig = (summary: Summary): Figure => ({ median: summary.median, p99: summary.p99, n: summary.n, summary });
export const single = (value: number, n = 1): Figure => ({ median: value, p99: value, n });

export interface Machine {
  cpus: number;
  model: string;
  memoryGb: number;
  node: string;
  platform: string;
}

export function machine(): Machine {
  const list = cpus();
  return {
    cpus: list.length,
    model: list[0]?.model ?? 'unknown',
    memoryGb: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

function cell(figure: Figure | null, unit: string): string {
  if (!figure) return 'n/a';
  const digits = unit === 'ms' ? (figure.median < 10 ? 2 : 1) : unit === 'calls/s' ? 0 : 1;
  const median = Number.isFinite(figure.median) ? figure.median.toFixed(digits) : '–';
  if (figure.n <= 1 || figure.p99 === figure.median) return `${median} (n=${figure.n})`;
  return `${median} / ${figure.p99.toFixed(digits)} (n=${figure.n})`;
}

function ratioCell(a: Figure | null, b: Figure | null): string {
  const value = ratio(a?.median, b?.median);
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}

/** A Markdown table (prints readably in a terminal and pastes into the README). */
export function table(rows: Row[]): string {
  const header = ['scenario', 'unit', 'coffer med / p99 (n)', 'direct or floor', 'peer (mcp-hub)', 'coffer ÷ base', 'coffer ÷ peer', 'judged', 'target', 'met'];
  const lines = rows.map((row) => [
    row.scenario,
    row.unit,
    cell(row.coffer, row.unit),
    row.base ? `${row.base.label}: ${cell(row.base, row.unit)}` : 'n/a',
    cell(row.peer, row.unit),
    ratioCell(row.coffer, row.base),
    ratioCell(row.coffer, row.peer),
    row.headline,
    row.target,
    row.met === null ? '–' : row.met ? 'yes' : '**no**',
  ]);
  const escape = (text: string) => text.replace(/\|/g, '\\|');
  return [header, header.map(() => '---'), ...lines].map((line) => `| ${line.map(escape).join(' | ')} |`).join('\n');
}
