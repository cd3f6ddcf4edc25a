/**
 * The console's charts: SVG drawn on the server, so a page needs no script and no library from a
 * CDN, and works offline. Every chart is an image with a title and a description for screen
 * readers; the page shows its figures in a table beside it. Only numbers and escaped labels go in.
 */
import { type Html, html, join } from './html.ts';

const W = 720;
const H = 240;
const PAD = { left: 56, right: 16, top: 16, bottom: 36 };
/** The plot inside the axes of a bar or line chart. */
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;

export interface Bar {
  label: string;
  value: number;
  /** The line drawn over the bars at this point (the budget), when there is one. */
  line: number | null;
}

const fmt = (n: number) =>
  Math.abs(n) >= 1000 ? n.toLocaleString('en-US') : String(Math.round(n * 100) / 100);

/** Round numbers for an axis from 0 (or `min`) to at least `max`: about five ticks. */
function ticks(min: number, max: number): number[] {
  const span = Math.max(max - min, 1);
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag) as number;
  const out: number[] = [];
  for (let v = Math.floor(min / step) * step; v <= max + step * 0.001; v += step) out.push(v);
  if ((out.at(-1) ?? 0) < max) out.push((out.at(-1) ?? 0) + step);
  return out;
}

function frame(id: string, title: string, desc: string, body: Html, height = H): Html {
  return html`<svg class="chart" viewBox="0 0 ${W} ${height}" role="img" aria-labelledby="${id}-t ${id}-d" focusable="false"><title id="${id}-t">${title}</title><desc id="${id}-d">${desc}</desc>${body}</svg>`;
}

function yAxis(values: number[], y: (v: number) => number): Html {
  return join(
    values.map(
      (v) =>
        html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v)}" y2="${y(v)}" class="grid"/><text x="${PAD.left - 6}" y="${y(v) + 4}" text-anchor="end" class="tick">${fmt(v)}</text>`,
    ),
  );
}

/** Labels under the x axis: at most about eight, evenly spread. */
function xLabels(labels: string[], x: (i: number) => number): Html {
  const every = Math.max(1, Math.ceil(labels.length / 8));
  const last = labels.length - 1;
  return join(
    labels.map((l, i) =>
      i % every === 0 || (i === last && last % every >= every / 2)
        ? html`<text x="${x(i)}" y="${H - PAD.bottom + 16}" text-anchor="${labels.length > 1 && i === 0 ? 'start' : labels.length > 1 && i === last ? 'end' : 'middle'}" class="tick">${l}</text>`
        : '',
    ),
  );
}

/** Bars (credits used) with a line over them (the budget), one point per label. */
export function barChart(id: string, title: string, desc: string, bars: readonly Bar[]): Html {
  const max = Math.max(1, ...bars.map((b) => Math.max(b.value, b.line ?? 0)));
  const axis = ticks(0, max);
  const top = axis.at(-1) ?? max;
  const slot = PLOT_W / Math.max(bars.length, 1);
  const x = (i: number) => PAD.left + slot * (i + 0.5);
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  const rects = bars.map(
    (b, i) =>
      html`<rect class="bar" x="${(x(i) - slot * 0.35).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" y="${y(b.value).toFixed(1)}" height="${(PAD.top + PLOT_H - y(b.value)).toFixed(1)}"/>`,
  );
  const linePts = bars
    .map((b, i) => (b.line === null ? null : `${x(i).toFixed(1)},${y(b.line).toFixed(1)}`))
    .filter((p): p is string => p !== null);
  const line = linePts.length > 0 ? html`<polyline class="line" points="${linePts.join(' ')}"/>` : '';
  const labels = xLabels(
    bars.map((b) => b.label),
    x,
  );
  return frame(id, title, desc, html`${yAxis(axis, y)}${rects}${line}${labels}`);
}

export interface Point {
  label: string;
  value: number | null;
}

/** A line over points in order; `inverted` puts 1 at the top and larger values below (a rank). */
export function lineChart(
  id: string,
  title: string,
  desc: string,
  points: readonly Point[],
  inverted = false,
): Html {
  const values = points.map((p) => p.value).filter((v): v is number => v !== null);
  const hi = Math.max(inverted ? 2 : 1, ...values);
  const axis = inverted ? [1, ...ticks(0, hi).filter((v) => v > 1 && Number.isInteger(v))] : ticks(0, hi);
  const bottom = axis[0] ?? 0;
  const top = Math.max(axis.at(-1) ?? hi, hi);
  const x = (i: number) => PAD.left + (points.length <= 1 ? PLOT_W / 2 : (PLOT_W * i) / (points.length - 1));
  const frac = (v: number) => (v - bottom) / (top - bottom || 1);
  const y = (v: number) => (inverted ? PAD.top + frac(v) * PLOT_H : PAD.top + PLOT_H - frac(v) * PLOT_H);
  const pts = points
    .map((p, i) => (p.value === null ? null : { x: x(i), y: y(p.value) }))
    .filter((p): p is { x: number; y: number } => p !== null);
  const polyline = html`<polyline class="line" points="${pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}"/>`;
  const dots = pts.map(
    (p) => html`<circle class="dot" cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="3.5"/>`,
  );
  const labels = xLabels(
    points.map((p) => p.label),
    x,
  );
  return frame(id, title, desc, html`${yAxis(axis, y)}${polyline}${dots}${labels}`);
}

/** A company in a relation graph: the one shown (hop 0), or one reached in one or two hops. */
export interface GraphNode {
  id: string;
  /** Its name; drawn shortened, in full in the description. */
  name: string;
  /** Its status in words (or "unknown"), drawn under the name: colour never carries it alone. */
  status: string;
  tone: 'bad' | 'ok' | 'unknown';
  hop: 0 | 1 | 2;
  /** For hop 2, the hop-1 company it is reached through. */
  parent?: string;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** A same-name person (dashed), not a shareholding. */
  dashed: boolean;
}

const GRAPH_H = 440;
/** A name drawn in a node: at most this many characters, then an ellipsis. */
const NODE_CHARS = 9;

const shortName = (name: string) => {
  const chars = [...name];
  return chars.length <= NODE_CHARS ? name : `${chars.slice(0, NODE_CHARS - 1).join('')}…`;
};

/**
 * Companies around the one shown: it in the middle, the companies one hop away on an inner ring,
 * those two hops away on an outer ring next to the one they are reached through. Each node is a
 * dot coloured by its status, with its name and its status as text; shareholdings are solid lines,
 * same-name persons dashed. The caller keeps the node count readable (the tables list them all).
 */
export function relationGraph(
  id: string,
  title: string,
  desc: string,
  nodes: readonly GraphNode[],
  edges: readonly GraphEdge[],
): Html {
  const cx = W / 2;
  const cy = GRAPH_H / 2;
  const pos = new Map<string, { x: number; y: number }>();
  const inner = nodes.filter((n) => n.hop === 1);
  const outer = nodes.filter((n) => n.hop === 2);
  const angleOf = new Map<string, number>();
  for (const n of nodes.filter((x) => x.hop === 0)) pos.set(n.id, { x: cx, y: cy });
  inner.forEach((n, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(inner.length, 1);
    angleOf.set(n.id, a);
    pos.set(n.id, { x: cx + 190 * Math.cos(a), y: cy + 105 * Math.sin(a) });
  });
  const slice = (2 * Math.PI) / Math.max(inner.length, 1);
  const byParent = new Map<string, GraphNode[]>();
  for (const n of outer) byParent.set(n.parent ?? '', [...(byParent.get(n.parent ?? '') ?? []), n]);
  for (const [parent, kids] of byParent) {
    const base = angleOf.get(parent) ?? 0;
    kids.forEach((n, j) => {
      const a = base + (j - (kids.length - 1) / 2) * ((slice * 0.8) / Math.max(kids.length, 1));
      pos.set(n.id, { x: cx + 320 * Math.cos(a), y: cy + 185 * Math.sin(a) });
    });
  }
  // The drawing as tall as its nodes and their labels (a name above each, a status below), so a
  // graph of few nodes leaves no empty band.
  const ys = [...pos.values()].map((p) => p.y);
  const top = ys.length > 0 ? Math.min(...ys) - 34 : 0;
  const height = ys.length > 0 ? Math.max(120, Math.max(...ys) + 30 - top) : GRAPH_H;
  for (const p of pos.values()) p.y -= top;
  const lines = edges.flatMap((e) => {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    if (!a || !b) return [];
    return [
      html`<line class="edge${e.dashed ? ' same' : ''}" x1="${a.x.toFixed(1)}" y1="${a.y.toFixed(1)}" x2="${b.x.toFixed(1)}" y2="${b.y.toFixed(1)}"/>`,
    ];
  });
  const dots = nodes.flatMap((n) => {
    const p = pos.get(n.id);
    if (!p) return [];
    const r = n.hop === 0 ? 9 : 6;
    return [
      html`<g class="node ${n.tone}${n.hop === 0 ? ' self' : ''}"><circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="${r}"/><text x="${p.x.toFixed(1)}" y="${(p.y - r - 4).toFixed(1)}" text-anchor="middle" class="name">${shortName(n.name)}</text><text x="${p.x.toFixed(1)}" y="${(p.y + r + 12).toFixed(1)}" text-anchor="middle" class="status">${n.status}</text></g>`,
    ];
  });
  return frame(id, title, desc, html`${lines}${dots}`, Math.round(height));
}
