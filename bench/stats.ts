// Summaries of samples: median and p99 by nearest rank (no interpolation, so
// p99 of few runs is simply the worst but one, honestly labelled with n).

export interface Summary {
  n: number;
  median: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { n: 0, median: NaN, p99: NaN, mean: NaN, min: NaN, max: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return { n: sorted.length, median, p99: rank(0.99), mean, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** a / b, NaN when either is missing. */
export function ratio(a: number | undefined, b: number | undefined): number {
  return a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? NaN : a / b;
}

export const round = (value: number, digits = 2): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

/** The least-squares slope of ln(median) over ln(tools): 1 is linear growth, 2 quadratic. */
export function growthOrder(points: ReadonlyArray<{ tools: number; median: number }>): number {
  const xs = points.map((point) => Math.log(point.tools));
  const ys = points.map((point) => Math.log(point.median));
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const mx = mean(xs);
  const my = mean(ys);
  let covariance = 0;
  let variance = 0;
  for (let i = 0; i < xs.length; i++) {
    covariance += (xs[i]! - mx) * (ys[i]! - my);
    variance += (xs[i]! - mx) ** 2;
  }
  return covariance / variance;
}
