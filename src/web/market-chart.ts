import { html, type SafeHtml } from './html.js';

// A line chart of a figure over periods, drawn on the server as inline SVG (no script): the
// median as a line with the quartiles as a band around it, and under each period its label
// and the number of listings behind it. Scales with the page (viewBox, width 100%); styled by
// the stylesheet's .chart rules (the pages' Content-Security-Policy allows no inline style).

export interface ChartPoint {
  label: string; // under the x axis: "Nov"
  year?: string; // under the label, where the year starts or changes: "2026"
  title: string; // the point's tooltip: "November 2026: median 1,650 € (1,270–2,270), 608 listings"
  n: number | null; // null: a period without a snapshot (shown as –)
  median: number | null;
  p25: number | null;
  p75: number | null;
}

const W = 420;
const H = 270;
const M = { left: 52, right: 10, top: 14, bottom: 58 };
// Room inside the plot before the first and after the last period, for their labels.
const INSET = 16;
// Half the width of a year under the axis ("2026" at 11 px, bold), with a little room.
const YEAR_HALF = 16;

function niceStep(range: number, ticks: number): number {
  const raw = range / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
}

const f1 = (n: number) => n.toFixed(1);

export function lineChart(opts: { id: string; title: string; points: ChartPoint[]; format: (v: number, step: number) => string }): SafeHtml {
  const { points } = opts;
  const values = points.flatMap((p) => [p.p25, p.median, p.p75]).filter((v): v is number => v !== null);
  if (values.length === 0) {
    return html`<p class="muted">No figures to draw: too few listings in every period.</p>`;
  }
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < hi * 0.02) {
    lo -= hi * 0.02;
    hi += hi * 0.02;
  }
  const step = niceStep(hi - lo, 4);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const x = (i: number) => M.left + INSET + (points.length === 1 ? plotW / 2 - INSET : (i * (plotW - 2 * INSET)) / (points.length - 1));
  const y = (v: number) => M.top + plotH - ((v - lo) / (hi - lo)) * plotH;
  // The first period's year beside the next year (a January soon after) would overlap it: it
  // is then drawn ending a little right of the first period, in the room left of the plot.
  const nextYear = points.findIndex((p, i) => i > 0 && p.year);
  const crowded = points[0]?.year !== undefined && nextYear > 0 && x(nextYear) - x(0) < 4 * YEAR_HALF;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(v);

  // Runs of consecutive points with figures: a suppressed period breaks the line.
  const runs: { i: number; p: ChartPoint }[][] = [];
  points.forEach((p, i) => {
    if (p.median === null) return runs.push([]);
    if (runs.length === 0) runs.push([]);
    runs[runs.length - 1].push({ i, p });
  });
  const lines = runs.filter((r) => r.length > 0);
  // The quartiles' band over a run; a period alone with its quartiles gets a bar of its own.
  const band = (r: { i: number; p: ChartPoint }[]) => {
    const withQ = r.filter(({ p }) => p.p25 !== null && p.p75 !== null);
    if (withQ.length === 0) return '';
    if (withQ.length === 1) {
      const [{ i, p }] = withQ;
      return html`<line class="band-bar" x1="${f1(x(i))}" x2="${f1(x(i))}" y1="${f1(y(p.p25!))}" y2="${f1(y(p.p75!))}"/>`;
    }
    const top = withQ.map(({ i, p }) => `${f1(x(i))},${f1(y(p.p75!))}`);
    const bottom = withQ.reverse().map(({ i, p }) => `${f1(x(i))},${f1(y(p.p25!))}`);
    return html`<polygon class="band" points="${[...top, ...bottom].join(' ')}"/>`;
  };
  const every = points.length > 14 ? Math.ceil(points.length / 13) : 1;

  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${opts.id}-title" preserveAspectRatio="xMidYMid meet">
<title id="${opts.id}-title">${opts.title}</title>
${ticks.map((v) => html`<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${f1(y(v))}" y2="${f1(y(v))}"/><text class="tick" x="${M.left - 6}" y="${f1(y(v) + 4)}" text-anchor="end">${opts.format(v, step)}</text>`)}
${lines.map(band)}
${lines.map((r) =>
  r.length > 1 ? html`<polyline class="line" points="${r.map(({ i, p }) => `${f1(x(i))},${f1(y(p.median!))}`).join(' ')}"/>` : '',
)}
${points.map((p, i) =>
  p.median === null
    ? ''
    : html`<circle class="dot${(p.n ?? 0) < 10 ? ' low' : ''}" cx="${f1(x(i))}" cy="${f1(y(p.median))}" r="4"><title>${p.title}</title></circle>`,
)}
${points.map((p, i) =>
  i % every === 0 || i === points.length - 1
    ? html`<text class="period" x="${f1(x(i))}" y="${H - M.bottom + 18}" text-anchor="middle">${p.label}</text><text class="n" x="${f1(x(i))}" y="${H - M.bottom + 34}" text-anchor="middle">${p.n ?? '–'}</text>`
    : '',
)}
${points.map((p, i) => (p.year ? html`<text class="year" x="${f1(x(i) + (i === 0 && crowded ? YEAR_HALF / 2 : 0))}" y="${H - M.bottom + 50}" text-anchor="${i === 0 && crowded ? 'end' : 'middle'}">${p.year}</text>` : ''))}
<text class="n" x="${M.left - 6}" y="${H - M.bottom + 34}" text-anchor="end">n =</text>
</svg>`;
}
