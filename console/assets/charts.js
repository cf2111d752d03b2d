// The console's charts, drawn as SVG by hand (docs/decisions/039-console-assets-and-charts.md):
// no library, nothing inline that the Content-Security-Policy would refuse, and every point
// an element the browser test can count (circle.point with data-t / data-value / data-count).
//
// lineChart: one <g class="series" data-source="provider/type"> per series, a polyline
// through the points' means, a circle per point, and a min–max whisker where a point
// stands for several samples (a bucket the server downsampled).
// barChart: one <rect class="bar"> per value, series side by side per day.

const SVG = 'http://www.w3.org/2000/svg';
const COLORS = ['#0b6e4f', '#c2410c', '#1d4ed8', '#7c3aed', '#b91c1c', '#0e7490', '#a16207', '#4d7c0f'];

function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, content, attrs = {}) {
  const node = el('text', { x, y, ...attrs }, parent);
  node.textContent = content;
  return node;
}

export function formatTime(ms, span) {
  const d = new Date(ms);
  const iso = d.toISOString();
  // Times of day for a few hours; with the day for a day or two (a 24 h axis from 13:05
  // to 13:05 read as no time at all); days beyond.
  if (span !== undefined && span <= 12 * 3600000) return iso.slice(11, 16);
  if (span !== undefined && span <= 2 * 86400000) return iso.slice(5, 10) + ' ' + iso.slice(11, 16);
  return iso.slice(0, 10);
}

export function formatValue(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(1) + 'G';
  if (a >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (a >= 1e4) return (v / 1e3).toFixed(1) + 'k';
  if (Number.isInteger(v)) return String(v);
  return v.toFixed(a < 10 ? 2 : 1);
}

function frame(options) {
  const width = options.width || 640, height = options.height || 220;
  const margin = { left: 52, right: 12, top: 22, bottom: 26 };
  const svg = el('svg', { class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' });
  for (const [k, v] of Object.entries(options.data || {})) svg.setAttribute('data-' + k, v);
  if (options.title) text(svg, margin.left, 14, options.title, { class: 'chart-title' });
  return { svg, width, height, margin };
}

function axes(f, x0, x1, y0, y1, xLabel = formatTime) {
  const { svg, width, height, margin } = f;
  el('line', { x1: margin.left, y1: height - margin.bottom, x2: width - margin.right, y2: height - margin.bottom,
               class: 'axis' }, svg);
  el('line', { x1: margin.left, y1: margin.top, x2: margin.left, y2: height - margin.bottom, class: 'axis' }, svg);
  text(svg, margin.left - 4, margin.top + 8, formatValue(y1), { class: 'tick', 'text-anchor': 'end' });
  text(svg, margin.left - 4, height - margin.bottom, formatValue(y0), { class: 'tick', 'text-anchor': 'end' });
  text(svg, margin.left, height - 8, xLabel(x0, x1 - x0), { class: 'tick' });
  text(svg, width - margin.right, height - 8, xLabel(x1, x1 - x0), { class: 'tick', 'text-anchor': 'end' });
}

// series: [{name, points: [{t, value, min, max, count, last}]}]; range: {start, end} (ms).
// onPoint(series, point) is called when a point is clicked.
export function lineChart(series, range, options = {}) {
  const f = frame(options);
  const { svg, width, height, margin } = f;
  let y0 = Infinity, y1 = -Infinity;
  for (const s of series) {
    for (const p of s.points) {
      y0 = Math.min(y0, p.min ?? p.value);
      y1 = Math.max(y1, p.max ?? p.value);
    }
  }
  if (!Number.isFinite(y0)) { y0 = 0; y1 = 1; }
  if (options.zero !== false) y0 = Math.min(0, y0);
  if (y1 === y0) y1 = y0 + 1;
  const x0 = range.start, x1 = range.end;
  const sx = (t) => margin.left + (t - x0) / (x1 - x0 || 1) * (width - margin.left - margin.right);
  const sy = (v) => height - margin.bottom - (v - y0) / (y1 - y0) * (height - margin.top - margin.bottom);
  axes(f, x0, x1, y0, y1, options.xLabel);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const g = el('g', { class: 'series', 'data-source': s.name, stroke: color, fill: color }, svg);
    if (s.points.length > 1) {
      el('polyline', { class: 'line', fill: 'none',
                       points: s.points.map((p) => `${sx(p.t).toFixed(1)},${sy(p.value).toFixed(1)}`).join(' ') }, g);
    }
    for (const p of s.points) {
      if (p.count > 1 && p.max !== p.min) {
        el('line', { class: 'whisker', x1: sx(p.t), x2: sx(p.t), y1: sy(p.min), y2: sy(p.max) }, g);
      }
      const c = el('circle', { class: 'point', cx: sx(p.t).toFixed(1), cy: sy(p.value).toFixed(1), r: 2.5,
                               'data-t': p.t, 'data-value': p.value, 'data-count': p.count ?? 1 }, g);
      const title = el('title', {}, c);
      title.textContent = `${s.name} ${new Date(p.t).toISOString()}: ${formatValue(p.value)}` +
        (p.count > 1 ? ` (mean of ${p.count}, ${formatValue(p.min)}–${formatValue(p.max)})` : '');
      if (options.onPoint) c.addEventListener('click', () => options.onPoint(s, p));
    }
  });
  legend(svg, series, width, margin);
  return svg;
}

// series: [{name, bars: [{day (ms, midnight UTC), value, rows}]}]; range: {start, end}.
export function barChart(series, range, options = {}) {
  const f = frame(options);
  const { svg, width, height, margin } = f;
  const day = 86400000;
  const first = Math.floor(range.start / day) * day, last = Math.ceil(range.end / day) * day;
  const days = Math.max(1, (last - first) / day);
  let y1 = 0;
  for (const s of series) for (const b of s.bars) y1 = Math.max(y1, b.value);
  if (y1 === 0) y1 = 1;
  axes(f, first, last, 0, y1, options.xLabel || ((t) => formatTime(t)));
  const slot = (width - margin.left - margin.right) / days;
  const barWidth = Math.max(1, slot / Math.max(1, series.length) - 1);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const g = el('g', { class: 'series', 'data-source': s.name, fill: color }, svg);
    for (const b of s.bars) {
      const x = margin.left + (b.day - first) / day * slot + i * (barWidth + 1);
      const h = b.value / y1 * (height - margin.top - margin.bottom);
      const rect = el('rect', { class: 'bar', x: x.toFixed(1), y: (height - margin.bottom - h).toFixed(1),
                                width: barWidth.toFixed(1), height: Math.max(0, h).toFixed(1),
                                'data-day': new Date(b.day).toISOString().slice(0, 10), 'data-value': b.value }, g);
      const title = el('title', {}, rect);
      title.textContent = `${s.name} ${new Date(b.day).toISOString().slice(0, 10)}: ${formatValue(b.value)}`;
      if (options.onBar) rect.addEventListener('click', () => options.onBar(s, b));
    }
  });
  legend(svg, series, width, margin);
  return svg;
}

function legend(svg, series, width, margin) {
  let x = width - margin.right;
  for (let i = series.length - 1; i >= 0; i--) {
    const label = series[i].name;
    x -= label.length * 6.2 + 18;
    el('rect', { x, y: 6, width: 10, height: 10, fill: COLORS[i % COLORS.length] }, svg);
    text(svg, x + 14, 15, label, { class: 'legend' });
  }
}
