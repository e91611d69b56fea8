// The dashboard's Personalities section: the list, and for the one opened its SOUL.md (with
// the characters used of its limit, counted as you type) and its settings as a form made
// from config.toml's JSON Schema. Saving SOUL.md uses PUT /api/personalities/{pid} (the
// config.toml text goes back as it was); saving settings uses
// PUT /api/personalities/{pid}/settings. The server checks both as loading the files would;
// a refused edit is one line on the status line and nothing is written. A tenant's key
// edits its own override only, and never a safety setting (those fields are disabled).
import { button, el, field, guarded, table } from "./ui.js";
import { settingsForm } from "./personalities-form.js";

const enc = encodeURIComponent;
const number = (n) => n.toLocaleString("en-US");
let opened = null; // the personality shown, kept across visits

function soulForm(pid, files, limit, ctx, refresh) {
  const box = el("textarea", { rows: 12, value: files.soul, className: "soul" });
  if (files.tenant) box.placeholder = "Empty: the owner's SOUL.md is used. What you save here replaces it for you.";
  const count = el("p", { className: "soul-count" });
  const recount = () => {
    const used = [...box.value].length;
    count.textContent = `SOUL.md: ${number(used)} of ${number(limit)} characters`;
    count.classList.toggle("over", used > limit);
  };
  box.addEventListener("input", recount);
  recount();
  const form = el("form", { className: "soul-form", aria: { label: `SOUL.md of ${pid}` } },
    field("SOUL.md", box, "The system prompt: who the agent is being."), count,
    el("div", { className: "row" }, el("button", { type: "submit", disabled: ctx.readOnly }, "Save SOUL.md")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    guarded(ctx, async () => {
      await ctx.call("PUT", `/api/personalities/${enc(pid)}`, { soul: box.value, config: files.config });
      await refresh(`Saved SOUL.md of ${pid}.`);
    });
  });
  return form;
}

async function editor(pid, ctx, refresh) {
  const [files, settings] = await Promise.all([
    ctx.call("GET", `/api/personalities/${enc(pid)}`),
    ctx.call("GET", `/api/personalities/${enc(pid)}/settings`),
  ]);
  const save = (values) =>
    guarded(ctx, async () => {
      await ctx.call("PUT", `/api/personalities/${enc(pid)}/settings`, { values });
      await refresh(`Saved the settings of ${pid} to config.toml.`);
    });
  const whose = settings.tenant ? ` (tenant ${settings.tenant}'s own override)` : "";
  return el("section", { className: "personality-editor", aria: { labelledby: "personality-title" } },
    el("h2", { id: "personality-title" }, `${pid}${whose}`),
    el("div", { className: "personality-columns" },
      el("div", {}, el("h3", {}, "Soul (the system prompt)"), soulForm(pid, files, settings.soul.limit, ctx, refresh)),
      el("div", {}, el("h3", {}, "Settings (config.toml)"),
        settingsForm(settings, ctx.readOnly || !settings.stored_in_files, save))),
    el("details", {}, el("summary", {}, "config.toml as stored"),
      el("pre", { className: "config-text" }, files.config || "(no config.toml: every default applies)")));
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const { personalities } = await ctx.call("GET", "/api/personalities");
  if (!personalities.some((p) => p.id === opened)) {
    opened = (personalities.find((p) => p.default) ?? personalities[0])?.id ?? null;
  }
  const refresh = async (done) => {
    await show(root, ctx);
    ctx.say(done);
  };
  const openButton = (p) =>
    button(p.id, () => { opened = p.id; return show(root, ctx); },
      { aria: p.id === opened ? { label: `Open ${p.id}`, current: "true" } : { label: `Open ${p.id}` } });
  const list = table("Personalities", [
    ["Personality", openButton],
    ["Name", (p) => p.name + (p.default ? " (default)" : "")],
    ["Model", (p) => p.model ?? "(the configured model)"],
    ["Approvals", (p) => p.approval_mode],
    ["Description", (p) => p.description],
  ], personalities, "No personalities.");
  root.replaceChildren(list, opened ? await editor(opened, ctx, refresh) : el("p", {}, ""));
}
