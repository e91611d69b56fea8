// A small dependency-free SVG bar chart: one stacked bar a label (a day), each part a
// series (input and output tokens). The chart is a picture for the eye (aria-hidden);
// the section puts the same figures in a table beside it for screen readers.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 640;
const HEIGHT = 220;
const PAD = { top: 12, right: 8, bottom: 28, left: 56 };

function svg(tag, attrs = {}, text = "") {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text) node.textContent = text;
  return node;
}

/** A round number at or above `max`, for the axis (1, 2 or 5 times a power of ten). */
function niceMax(max) {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * A stacked bar chart. `rows` are the bars (left to right), `label(row)` names one,
 * `series` are [name, (row) => value, css class] drawn bottom up; `format(n)` writes a
 * value. Returns an <svg> (aria-hidden: the figures belong in a table beside it).
 */
export function barChart(rows, label, series, format = String) {
  const chart = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: "bar-chart",
    "aria-hidden": "true",
    focusable: "false",
  });
  const inner = { w: WIDTH - PAD.left - PAD.right, h: HEIGHT - PAD.top - PAD.bottom };
  const totals = rows.map((row) => series.reduce((sum, [, value]) => sum + value(row), 0));
  const top = niceMax(Math.max(0, ...totals));
  const y = (v) => PAD.top + inner.h - (v / top) * inner.h;
  for (const v of [0, top / 2, top]) {
    chart.append(svg("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(v), y2: y(v), class: "grid-line" }));
    chart.append(svg("text", { x: PAD.left - 6, y: y(v) + 4, class: "axis", "text-anchor": "end" }, format(v)));
  }
  const slot = inner.w / Math.max(rows.length, 1);
  const every = Math.ceil(rows.length / 8);
  rows.forEach((row, i) => {
    const x = PAD.left + i * slot + slot * 0.15;
    let base = 0;
    for (const [name, value, cls] of series) {
      const v = value(row);
      if (v <= 0) continue;
      const rect = svg("rect", {
        x, y: y(base + v), width: slot * 0.7, height: y(base) - y(base + v), class: `bar ${cls}`,
      });
      rect.dataset.label = label(row);
      rect.append(svg("title", {}, `${label(row)}: ${format(v)} ${name}`));
      chart.append(rect);
      base += v;
    }
    if ((rows.length - 1 - i) % every === 0) { // counted from the last bar: it is always named
      chart.append(svg("text", { x: x + slot * 0.35, y: HEIGHT - 8, class: "axis", "text-anchor": "middle" }, label(row).slice(5)));
    }
  });
  return chart;
}

/** The legend of `series`, as text (the colours are the chart's). */
export function legend(series) {
  const list = document.createElement("ul");
  list.className = "chart-legend";
  list.setAttribute("aria-hidden", "true");
  for (const [name, , cls] of series) {
    const item = document.createElement("li");
    const swatch = document.createElement("span");
    swatch.className = `swatch ${cls}`;
    item.append(swatch, name);
    list.append(item);
  }
  return list;
}
