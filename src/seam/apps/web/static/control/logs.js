// The dashboard's Logs section: the structured log ($SEAM_HOME/logs/seam.jsonl), live.
// The filters (level, session, surface) load the last lines (GET /api/logs) and open the
// stream of new ones (GET /api/logs/stream, Server-Sent Events); newest at the bottom, at
// most MAX_ROWS kept. Pause holds new lines (as many) until Resume. Leaving the section
// closes the stream.
import { button, el, field, guarded } from "./ui.js";
import { logRow } from "./logs-row.js";

const MAX_ROWS = 1000;
const LEVELS = ["debug", "info", "warning", "error", "critical"];
const SURFACES = ["cli", "web", "gateway", "worker", "acp"];
let source = null; // the open EventSource, closed on leaving or re-filtering
let generation = 0; // the latest load: an earlier one still answering opens no stream

function stop() {
  source?.close();
  source = null;
}

window.addEventListener("hashchange", () => {
  if (location.hash !== "#/logs") {
    generation += 1;
    stop();
  }
});

function select(name, values, first) {
  return el("select", { name }, first ? el("option", { value: "" }, first) : null,
    values.map((v) => el("option", { value: v }, v)));
}

/** The query string of the filter form's values (empty ones left out). */
function query(form) {
  const params = new URLSearchParams();
  for (const [key, value] of new FormData(form)) {
    if (String(value).trim()) params.set(key, String(value).trim());
  }
  return params;
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  stop();
  const list = el("ol", {
    className: "log-lines", role: "log", aria: { label: "Log lines", live: "off" },
  });
  const held = [];
  let paused = false;
  const pause = el("button", { type: "button", aria: { pressed: "false" } }, "Pause");
  const form = el(
    "form",
    { className: "row log-filters", aria: { label: "Filter the log" } },
    field("Level", select("level", LEVELS)),
    field("Session", el("input", {
      name: "session", type: "search", maxLength: 200, autocomplete: "off", placeholder: "any",
    })),
    field("Surface", select("surface", SURFACES, "any")),
    el("button", { type: "submit" }, "Apply"),
    pause,
  );

  function add(lines) {
    const near = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    list.append(...lines.map(logRow));
    while (list.childElementCount > MAX_ROWS) list.firstElementChild.remove();
    if (near) list.scrollTop = list.scrollHeight;
  }

  function receive(lines) {
    if (!paused) return add(lines);
    held.push(...lines);
    held.splice(0, Math.max(0, held.length - MAX_ROWS));
    ctx.say(`Paused: ${held.length} new line(s) held.`);
  }

  pause.addEventListener("click", () => {
    paused = !paused;
    pause.textContent = paused ? "Resume" : "Pause";
    pause.setAttribute("aria-pressed", String(paused));
    if (!paused) add(held.splice(0));
    ctx.say(paused ? "Paused: new lines are held." : "Live.");
  });

  async function load() {
    stop();
    list.dataset.live = "false"; // until this load's own stream says it is ready
    const mine = ++generation;
    const params = query(form);
    const last = await guarded(ctx, () => ctx.call("GET", `/api/logs?${params}&limit=200`));
    if (!last || mine !== generation || !root.isConnected) return;
    list.replaceChildren();
    add(last.lines);
    if (!last.lines.length) ctx.say("No lines match yet; new ones appear as they are written.");
    source = new EventSource(`/api/logs/stream?${params}`);
    source.addEventListener("ready", () => {
      list.dataset.live = "true";
      if (last.lines.length) ctx.say("Live.");
    });
    source.addEventListener("lines", (event) => receive(JSON.parse(event.data)));
    source.addEventListener("error", () => {
      list.dataset.live = "false";
      ctx.say("The live log was cut; reconnecting…", "error");
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  for (const name of ["level", "surface"]) form.elements[name].addEventListener("change", load);
  const hint = `The last ${MAX_ROWS} lines are kept here; seam logs shows them all.`;
  root.replaceChildren(form, list, el("p", { className: "hint" }, hint));
  await load();
}
