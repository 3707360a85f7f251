// A small strict parser of the Prometheus text exposition format (0.0.4), for
// tests that scrape /metrics: every line must be a HELP, a TYPE or a sample of
// a declared family, label values properly escaped, a histogram's buckets
// cumulative and ending in +Inf = _count. It throws on anything else.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'], counter: [''], gauge: [''], untyped: [''] };

/** As Prometheus reads them (Go's ParseFloat): NaN and Inf in any case. */
function parseValue(text: string, line: number): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: '${text}' is not a number`);
  return Number(text);
}

/** `{a="x",b="y\"z"}` from position 0 of `text`; answers the labels and where they end. */
function parseLabels(text: string, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without '='`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name '${name}'`);
    if (name in labels) throw new Error(`line ${line}: label '${name}' twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value must be quoted`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] !== '\\') {
        value += text[j];
        continue;
      }
      const escaped = text[++j];
      if (escaped === 'n') value += '\n';
      else if (escaped === '\\' || escaped === '"') value += escaped;
      else throw new Error(`line ${line}: bad escape '\\${escaped}'`);
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`line ${line}: expected ',' or '}' after a label`);
  }
  return { labels, end: i + 1 };
}

function familyOf(families: Map<string, Family>, sample: string, line: number): Family {
  for (const family of families.values()) {
    if (SUFFIXES[family.type]!.some((suffix) => family.name + suffix === sample)) return family;
  }
  throw new Error(`line ${line}: sample '${sample}' of no declared family`);
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const sample of family.samples.filter((s) => s.name.endsWith('_bucket'))) {
    const { le, ...rest } = sample.labels;
    if (le === undefined) throw new Error(`${family.name}: bucket without le`);
    const key = JSON.stringify(rest);
    series.set(key, [...(series.get(key) ?? []), sample]);
  }
  for (const [key, buckets] of series) {
    for (let i = 1; i < buckets.length; i++) {
      if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family.name}${key}: buckets not cumulative`);
    }
    const last = buckets[buckets.length - 1]!;
    const count = family.samples.find((s) => s.name === `${family.name}_count` && JSON.stringify(s.labels) === key);
    if (last.labels.le !== '+Inf' || count?.value !== last.value) throw new Error(`${family.name}${key}: +Inf bucket missing or not equal to _count`);
  }
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw === '') return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
    if (meta) {
      const [, what, name, rest] = meta;
      if (!NAME.test(name!)) throw new Error(`line ${line}: bad metric name '${name}'`);
      const family = families.get(name!) ?? { name: name!, type: 'untyped', help: '', samples: [] };
      if (what === 'TYPE') {
        if (!TYPES.has(rest!)) throw new Error(`line ${line}: unknown type '${rest}'`);
        if (family.samples.length > 0) throw new Error(`line ${line}: TYPE after samples`);
        family.type = rest as Family['type'];
      } else family.help = rest!;
      families.set(name!, family);
      return;
    }
    if (raw.startsWith('#')) return;
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd < 0) throw new Error(`line ${line}: sample without value`);
    const name = raw.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name '${name}'`);
    let rest = raw.slice(nameEnd);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const parsed = parseLabels(rest, line);
      labels = parsed.labels;
      rest = rest.slice(parsed.end);
    }
    const parts = rest.trim().split(' ');
    if (parts.length < 1 || parts.length > 2 || !rest.startsWith(' ')) throw new Error(`line ${line}: expected 'value [timestamp]'`);
    familyOf(families, name, line).samples.push({ name, labels, value: parseValue(parts[0]!, line) });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of the sample `name` whose labels include `labels`, or undefined. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    const sample = family.samples.find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
    if (sample) return sample.value;
  }
  return undefined;
}
