// The dashboard's section "usage" (its view; routes in apps/web/control/usage.py): the
// caller's tenant's tokens and cost per day (a chart, with the same figures as a table
// beside it), per model and per session, and what every request carries before any
// message (the system prompt and tool schemas), and the spending limits (docs/budgets.md).
import { cost } from "../usage.js";
import { barChart, legend } from "./chart.js";
import { el, field, guarded, table } from "./ui.js";

const n = (x) => (x ?? 0).toLocaleString("en-US");
const SERIES = [
  ["input tokens", (d) => d.input_tokens, "series-in"],
  ["output tokens", (d) => d.output_tokens, "series-out"],
];
const FIGURES = [
  ["Calls", (r) => n(r.calls)],
  ["Input tokens", (r) => n(r.input_tokens)],
  ["Cached", (r) => n(r.cache_read_tokens)],
  ["Output tokens", (r) => n(r.output_tokens)],
  ["Cost", (r) => cost(r)],
];
let days = 30;
const PERIODS = { day: "Today", session: "Per session", job: "Per cron run" };

function amount(unit, value) {
  if (unit === "tokens") return `${n(Math.round(value))} tokens`;
  return `$${value.toFixed(value >= 1 ? 2 : 4)}`;
}

function spent(line) {
  let text = `${line.unit === "tokens" ? n(Math.round(line.spent)) : amount("usd", line.spent)} of ${amount(line.unit, line.allowed)}`;
  if (line.cost_unknown) text += " (cost unknown for some calls: their model has no price)";
  return text;
}

// Today's spend against each day limit, then the per-session and per-run limits set.
function budgetPart(budget) {
  const today = budget?.today ?? [];
  const set = budget?.set ?? [];
  if (!today.length && !set.length) {
    return el("p", { className: "budget empty" }, "No spending limits are set ([budget] in config.toml, a personality's own, a cron job's --max-tokens).");
  }
  const rows = [
    ...today.map((l) => ({ ...l, shown: spent(l), state: l.reached ? "reached" : "" })),
    ...set.map((l) => ({ ...l, shown: `at most ${amount(l.unit, l.allowed)}`, state: "" })),
  ];
  return table("Spending limits", [
    ["Limit", (r) => PERIODS[r.period] ?? r.period],
    ["Spent", (r) => r.shown],
    ["Set in", (r) => r.source],
    ["", (r) => r.state],
  ], rows);
}

function short(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(value >= 1e4 ? 0 : 1)}k`;
  return String(Math.round(value));
}

function overheadLine(overhead) {
  if (!overhead) return el("p", { className: "overhead empty" }, "The fixed prompt overhead cannot be measured here.");
  const share = Math.round((overhead.tokens * 100) / Math.max(overhead.window, 1));
  return el("p", { className: "overhead" },
    `Every request carries about ${n(overhead.tokens)} tokens before any message: the system prompt and tool schemas of the personality ${overhead.personality} (${share}% of the ${n(overhead.window)}-token context window).`);
}

function daysChooser(root, ctx) {
  const select = el("select", { id: "usage-days" },
    [7, 30, 90, 365].map((d) => el("option", { value: String(d), selected: d === days }, `${d} days`)));
  select.addEventListener("change", () => {
    days = Number(select.value);
    show(root, ctx);
  });
  return field("Period", select);
}

function dayPart(body) {
  const used = body.per_day.filter((d) => d.calls > 0);
  const chart = el("figure", { className: "usage-chart" },
    el("figcaption", {}, `Tokens per day, last ${body.days} days`),
    barChart(body.per_day, (d) => d.day, SERIES, short), legend(SERIES));
  const figures = table("Usage per day", [["Day", (d) => d.day], ...FIGURES], used,
    "No model calls in this period.");
  return el("div", { className: "usage-days" }, chart, figures);
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const tz = -new Date().getTimezoneOffset();
  const body = await guarded(ctx, () => ctx.call("GET", `/api/usage?days=${days}&tz=${tz}`));
  if (!body) return;
  const total = body.total;
  root.replaceChildren(
    el("div", { className: "row" }, daysChooser(root, ctx)),
    el("p", { className: "usage-total" },
      `${n(total.input_tokens)} tokens in (${n(total.cache_read_tokens)} cached) · ${n(total.output_tokens)} out · ${cost(total)} over ${n(total.calls)} model calls`),
    overheadLine(body.overhead),
    el("h2", {}, "Limits"),
    budgetPart(body.budget),
    el("h2", {}, "Per day"),
    dayPart(body),
    el("h2", {}, "Per model"),
    table("Usage per model", [["Model", (r) => r.model], ...FIGURES], body.per_model, "No model calls in this period."),
    el("h2", {}, "Per session"),
    table("Usage per session", [["Session", (r) => r.session], ...FIGURES], body.per_session, "No model calls in this period."),
  );
  ctx.say("");
}
