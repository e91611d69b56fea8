// The dashboard's Sessions section: the caller's sessions (its tenant's only: the server
// lists no other) with each one's tokens and cost, a full-text search, and per session:
// open in Chat, rename, fork, undo the last turn, export (markdown, JSON) and delete.
// Routes: GET /api/sessions(?q=), PATCH/DELETE /api/sessions/{name},
// GET .../export?format=, POST .../fork, POST .../undo (apps/web/control/sessions.py).
import { deleteForm, forkForm, renameForm, undoForm } from "./sessions-actions.js";
import { el, field, table } from "./ui.js";

const enc = encodeURIComponent;
const state = { query: "" }; // the search, kept across visits

function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
}

const count = (n) => (n ?? 0).toLocaleString();
const cost = (usage) => `$${(usage?.cost_usd ?? 0).toFixed(4)}${usage?.unpriced_calls ? "+" : ""}`;
const num = (text) => el("span", { className: "num" }, text);

/** Open `name` in the Chat section (app.js opens the session its hash names). */
function openInChat(name) {
  window.dispatchEvent(new CustomEvent("seam:sessions-changed"));
  location.hash = `#${enc(name)}`;
}

function exportLink(name, format, label) {
  return el("a", { href: `/api/sessions/${enc(name)}/export?format=${format}`, download: "",
    className: "sessions-export", aria: { label: `Export ${name} as ${label}` } }, label);
}

/** The row's actions: each opens its form in the panel (or is a download link). */
function actions(s, ctx, openPanel) {
  const act = (text, make) => el("button", { type: "button", aria: { label: `${text} ${s.name}` },
    onclick: () => openPanel(make, s.name) }, text);
  const links = [exportLink(s.name, "markdown", "Markdown"), exportLink(s.name, "json", "JSON")];
  if (ctx.readOnly) return el("div", { className: "sessions-actions" }, ...links);
  return el("div", { className: "sessions-actions" },
    act("Rename", renameForm), act("Fork", forkForm), act("Undo", undoForm), ...links,
    act("Delete", deleteForm));
}

function columns(ctx, openPanel, searching) {
  const cols = [
    ["Name", (s) => el("button", { type: "button", className: "link", title: "Open in Chat",
      aria: { label: `Open ${s.name} in Chat` }, onclick: () => openInChat(s.name) }, s.name)],
    ["Title", (s) => s.title ?? ""],
    ["Personality", (s) => s.personality ?? ""],
    ["Last active", (s) => when(s.updated_at)],
    ["Messages", (s) => num(count(s.message_count))],
    ["Tokens in", (s) => num(count(s.usage?.input_tokens))],
    ["Tokens out", (s) => num(count(s.usage?.output_tokens))],
    ["Cost", (s) => num(cost(s.usage))],
    ["Actions", (s) => actions(s, ctx, openPanel)],
  ];
  if (searching) cols.splice(2, 0, ["Match", (s) => el("span", { className: "snippet" }, s.snippet ?? "")]);
  return cols;
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const search = el("input", { type: "search", value: state.query, autocomplete: "off",
    placeholder: "Words from any message" });
  const form = el("form", { role: "search", className: "row sessions-search" },
    field("Search sessions", search), el("button", { type: "submit" }, "Search"));
  const list = el("div", { className: "sessions-table" });
  const panel = el("section", { className: "sessions-panel", hidden: true,
    aria: { label: "Session action" } });
  root.replaceChildren(form, panel, list);

  let opener = null; // the row's button that opened the panel: the focus goes back to it
  const close = () => {
    panel.hidden = true;
    panel.replaceChildren();
    if (opener?.isConnected) opener.focus();
    opener = null;
  };
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close();
  });
  const done = async (text) => {
    close();
    window.dispatchEvent(new CustomEvent("seam:sessions-changed"));
    await refresh();
    ctx.say(text);
  };
  const openPanel = (make, name) => {
    opener = document.activeElement;
    panel.replaceChildren(make(ctx, name, done, close));
    panel.hidden = false;
    panel.querySelector("input, button[type=submit]")?.focus();
  };
  async function refresh() {
    const q = state.query;
    let answer;
    try {
      answer = await ctx.call("GET", `/api/sessions?usage=true${q ? `&q=${enc(q)}` : ""}`);
    } catch (err) {
      ctx.say(err.message ?? String(err), "error");
      return;
    }
    const empty = q ? `No session mentions “${q}”.` : "No sessions yet: start one in Chat.";
    const caption = q ? `Sessions mentioning “${q}”` : "Your sessions, most recent first";
    list.replaceChildren(table(caption, columns(ctx, openPanel, Boolean(q)), answer.sessions, empty));
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    state.query = search.value.trim();
    close();
    await refresh();
  });
  ctx.say("");
  await refresh();
}
