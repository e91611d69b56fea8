// One line of the structured log as the Logs section shows it: time, level, surface,
// session, logger, message, and the traceback folded away. Text only, never HTML: a log
// line holds whatever a model, a tool or a stranger in a chat wrote.
import { el } from "./ui.js";

const pad = (n, width = 2) => String(n).padStart(width, "0");

/** `2026-12-05 03:21:43.123` in the browser's time zone ("?" without a time). */
export function when(ts) {
  if (typeof ts !== "number") return "?";
  const d = new Date(ts * 1000);
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${day} ${time}.${pad(d.getMilliseconds(), 3)}`;
}

const iso = (ts) => (typeof ts === "number" ? new Date(ts * 1000).toISOString() : "");

/** The list item of one record (the fields the server sent: see control/logs_read.py). */
export function logRow(line) {
  const level = String(line.level ?? "?");
  const where = line.session_name
    ? `${line.session_name}${line.submission ? ` / ${line.submission}` : ""}`
    : "";
  return el(
    "li",
    { className: `log-line level-${level.replace(/[^a-z]/g, "")}` },
    el("time", { className: "log-ts", dateTime: iso(line.ts) }, when(line.ts)),
    el("span", { className: "log-level" }, level.toUpperCase()),
    el("span", { className: "log-surface", title: "surface" }, line.surface ?? "-"),
    el("span", { className: "log-logger", title: "logger" }, line.logger ?? ""),
    where ? el("span", { className: "log-session", title: line.session }, `[${where}]`) : null,
    el("span", { className: "log-message" }, line.message ?? ""),
    line.trace_id ? el("span", { className: "log-trace" }, `trace=${line.trace_id}`) : null,
    line.exc
      ? el("details", { className: "log-exc" },
        el("summary", {}, "traceback"), el("pre", {}, line.exc))
      : null,
  );
}
