// A hand-written SVG line chart: warm tools/list latency (median) against the
// number of upstreams, one line per path. No dependency; opens in a browser.

export interface Series {
  name: string;
  colour: string;
  points: Array<{ x: number; y: number }>;
}

const W = 720;
const H = 420;
const M = { left: 70, right: 170, top: 40, bottom: 55 };

function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function lineChart(title: string, xLabel: string, yLabel: string, series: Series[]): string {
  const points = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.y));
  const xMax = niceMax(Math.max(1, ...points.map((p) => p.x)));
  const yMax = niceMax(Math.max(1, ...points.map((p) => p.y)) * 1.05);
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const sx = (x: number) => M.left + (x / xMax) * plotW;
  const sy = (y: number) => M.top + plotH - (y / yMax) * plotH;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2 - M.right / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const y = (yMax / 5) * i;
    out.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${sy(y)}" y2="${sy(y)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 8}" y="${sy(y) + 4}" text-anchor="end">${Number(y.toPrecision(3))}</text>`);
    const x = (xMax / 5) * i;
    out.push(`<line x1="${sx(x)}" x2="${sx(x)}" y1="${M.top + plotH}" y2="${M.top + plotH + 5}" stroke="#333"/>`);
    out.push(`<text x="${sx(x)}" y="${M.top + plotH + 20}" text-anchor="middle">${Number(x.toPrecision(3))}</text>`);
  }
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${M.left}" x2="${M.left + plotW}" y1="${M.top + plotH}" y2="${M.top + plotH}" stroke="#333"/>`);
  out.push(`<text x="${M.left + plotW / 2}" y="${H - 12}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(18 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  series.forEach((s, index) => {
    const valid = s.points.filter((p) => Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
    if (valid.length > 1) {
      out.push(`<polyline fill="none" stroke="${s.colour}" stroke-width="2" points="${valid.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}"/>`);
    }
    for (const p of valid) {
      out.push(`<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y).toFixed(1)}" r="3.5" fill="${s.colour}"><title>${esc(s.name)}: ${p.x} upstreams, ${p.y.toFixed(1)} ms</title></circle>`);
    }
    const ly = M.top + 10 + index * 22;
    out.push(`<line x1="${W - M.right + 15}" x2="${W - M.right + 40}" y1="${ly}" y2="${ly}" stroke="${s.colour}" stroke-width="2"/>`);
    out.push(`<text x="${W - M.right + 46}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
