// The Sessions section's actions on one session, each shown in the section's action panel
// (a labelled region under the table): rename, fork, undo and delete. Each asks the server
// and reports on the section's status line; `done(text)` refreshes the table after a
// change. Delete asks first; undo asks again only when files changed since the turn.
import { button, el, field } from "./ui.js";

const enc = encodeURIComponent;
const path = (name, tail = "") => `/api/sessions/${enc(name)}${tail}`;

/** A `<form>` (Enter submits) with a heading naming what it does, and a Cancel button. */
function panelForm(title, fields, submitText, onSubmit, close) {
  const form = el(
    "form",
    { className: "sessions-form" },
    el("h2", { tabIndex: -1 }, title),
    ...fields,
    el("div", { className: "row" },
      el("button", { type: "submit" }, submitText),
      button("Cancel", async () => close())),
  );
  // Enter or the button: one request at a time (the button is off while it runs).
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const submit = form.querySelector("button[type=submit]");
    if (submit.disabled) return;
    submit.disabled = true;
    Promise.resolve(onSubmit()).finally(() => { submit.disabled = false; });
  });
  return form;
}

/** Run `action`; its error goes to the status line (and false is returned). */
async function attempt(ctx, action) {
  try {
    await action();
    return true;
  } catch (err) {
    ctx.say(err.message ?? String(err), "error");
    return false;
  }
}

export function renameForm(ctx, name, done, close) {
  const input = el("input", { type: "text", value: name, required: true, maxLength: 200,
    autocomplete: "off" });
  return panelForm(`Rename “${name}”`, [field("New name", input)], "Rename", () =>
    attempt(ctx, async () => {
      const answer = await ctx.call("PATCH", path(name), { name: input.value.trim() });
      await done(`Renamed “${name}” to “${answer.name}”.`);
    }), close);
}

export function forkForm(ctx, name, done, close) {
  const turns = el("input", { type: "number", min: "1", step: "1", value: "1", required: true });
  const as = el("input", { type: "text", maxLength: 200, autocomplete: "off" });
  const fields = [
    field("Turns to keep", turns, "The first N turns (each a message of yours and its answer)."),
    field("New session's name", as, "Optional: a name is made when left empty."),
  ];
  return panelForm(`Fork “${name}”`, fields, "Fork", () =>
    attempt(ctx, async () => {
      const body = { at: Number(turns.value) };
      if (as.value.trim()) body.as = as.value.trim();
      const made = await ctx.call("POST", path(name, "/fork"), body);
      await done(`Forked “${name}” into “${made.session}” (${made.copied_messages} messages).`);
    }), close);
}

export function deleteForm(ctx, name, done, close) {
  const note = el("p", {}, "The transcript and its usage are deleted. This cannot be undone.");
  return panelForm(`Delete “${name}”?`, [note], "Delete", () =>
    attempt(ctx, async () => {
      await ctx.call("DELETE", path(name));
      await done(`Deleted “${name}”.`);
    }), close);
}

function undone(name, answer) {
  const files = answer.restored.map((f) => `${f.path} (${f.action})`).join(", ");
  const what = files ? `restored ${files}` : "no files to restore";
  return `Undid turn ${answer.turn} of “${name}”: ${answer.removed_messages} messages removed, ${what}.`;
}

/** Undo the session's last turn; when the person changed its files since, ask in the
 * panel before overwriting them (their version is kept in a checkpoint first). */
export function undoForm(ctx, name, done, close) {
  const note = el("p", {}, "Takes back the last turn: its messages, and the files it changed.");
  let force = false;
  const form = panelForm(`Undo the last turn of “${name}”`, [note], "Undo", async () => {
    try {
      await done(undone(name, await ctx.call("POST", path(name, "/undo"), { force })));
    } catch (err) {
      if (err.status === 409 && !force && /"force": true/.test(err.message)) {
        force = true;
        note.textContent = `${err.message.split(";")[0]}. Undo anyway? Your version is kept in a checkpoint first.`;
        form.querySelector("button[type=submit]").textContent = "Undo anyway";
      } else {
        ctx.say(err.message ?? String(err), "error");
      }
    }
  }, close);
  return form;
}
