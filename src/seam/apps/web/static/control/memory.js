// The dashboard's Memory section: MEMORY.md and USER.md as the agent stores them, one box an
// entry, with the characters used of each file's limit counted as you type (the limit the
// memory tool enforces; separators count too). Entries are saved, added and removed through
// the server's memory checks (routes in apps/web/control/memory.py and PUT /api/memory): a
// refused entry is explained on the status line and nothing is written. A tenant's key
// sees and edits its own memory only.
import { button, el, field, guarded } from "./ui.js";

/** Characters an entry takes in its file: what the store keeps (lines' trailing spaces and
 * the entry's outer blank lines dropped), counted as Python counts them (code points). */
function entryChars(text) {
  const kept = text.split("\n").map((line) => line.trimEnd()).join("\n").trim();
  return [...kept].length;
}

/** Characters the non-empty `texts` take in their file, separators included. */
function usedChars(texts, separator) {
  const kept = texts.filter((t) => t.trim() !== "");
  if (!kept.length) return 0;
  return kept.reduce((sum, t) => sum + entryChars(t), 0) + [...separator].length * (kept.length - 1);
}

const number = (n) => n.toLocaleString("en-US");

/** The line "312 of 2,200 characters" and its meter, redrawn by `update(used, extra)`. */
function counter(file) {
  const meter = el("meter", { min: 0, max: file.limit, value: file.chars, aria: { hidden: "true" } });
  const text = el("span", { className: "memory-count-text" });
  const line = el("p", { className: "memory-count", dataset: { target: file.target } }, text, meter);
  const update = (used, extra = 0) => {
    const total = used + extra;
    const adding = extra ? ` (${number(total)} with the new entry)` : "";
    text.textContent = `${file.file}: ${number(used)} of ${number(file.limit)} characters${adding}`;
    meter.value = Math.min(total, file.limit);
    line.classList.toggle("over", total > file.limit);
  };
  update(file.chars);
  return { line, update };
}

function entryBox(file, entry, n, remove, readOnly) {
  const box = el("textarea", { rows: Math.min(6, entry.split("\n").length + 1), value: entry });
  const label = `${file.file} entry ${n + 1}`;
  const drop = button("Remove", () => remove(n, entry), { aria: { label: `Remove ${label}` }, disabled: readOnly });
  return { box, item: el("li", { className: "memory-entry" }, field(label, box), drop) };
}

/** One memory file: its entries (editable, saved together), its counter, an add form. */
function fileView(file, separator, ctx, refresh) {
  const { line, update } = counter(file);
  const remove = (n, entry) =>
    guarded(ctx, async () => {
      const path = `/api/memory/${file.target}/entries/${n}?entry=${encodeURIComponent(entry)}`;
      await ctx.call("DELETE", path);
      await refresh(`Removed entry ${n + 1} of ${file.file}.`);
    });
  const rows = file.entries.map((entry, n) => entryBox(file, entry, n, remove, ctx.readOnly));
  const boxes = rows.map((r) => r.box);
  const draft = el("textarea", { rows: 2, className: "memory-draft" });
  const recount = () => update(usedChars(boxes.map((b) => b.value), separator),
    draft.value.trim() ? entryChars(draft.value) + (boxes.length ? [...separator].length : 0) : 0);
  for (const box of [...boxes, draft]) box.addEventListener("input", recount);
  const save = el("form", { className: "memory-file", aria: { label: `${file.file} entries` } },
    rows.length ? el("ol", { className: "memory-entries" }, rows.map((r) => r.item))
      : el("p", { className: "empty" }, `${file.file} has no entries yet.`),
    el("div", { className: "row" }, el("button", { type: "submit", disabled: ctx.readOnly || !rows.length }, `Save ${file.file}`)));
  save.addEventListener("submit", (event) => {
    event.preventDefault();
    const entries = boxes.map((b) => b.value).filter((t) => t.trim() !== "");
    guarded(ctx, async () => {
      await ctx.call("PUT", "/api/memory", { [file.target]: entries });
      await refresh(`Saved ${file.file}.`);
    });
  });
  const add = el("form", { className: "memory-add" },
    field(`New entry in ${file.file}`, draft, "One fact; the agent's own checks apply (no secrets, no instructions)."),
    el("div", { className: "row" }, el("button", { type: "submit", disabled: ctx.readOnly }, `Add to ${file.file}`)));
  add.addEventListener("submit", (event) => {
    event.preventDefault();
    guarded(ctx, async () => {
      await ctx.call("POST", `/api/memory/${file.target}/entries`, { entry: draft.value });
      await refresh(`Added an entry to ${file.file}.`);
    });
  });
  return el("section", { className: "memory-section", aria: { labelledby: `memory-${file.target}` } },
    el("h2", { id: `memory-${file.target}` }, file.file), line, save, add);
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const data = await ctx.call("GET", "/api/memory/files");
  const refresh = async (done) => {
    await show(root, ctx);
    ctx.say(done);
  };
  const whose = data.tenant ? `Tenant ${data.tenant}'s own memory.` : "The owner's memory.";
  root.replaceChildren(
    el("p", { className: "hint" }, `${whose} Entries are separated by a line holding only § in the files; the agent reads them at the start of each session.`),
    ...data.files.map((file) => fileView(file, data.separator, ctx, refresh)),
  );
}
