// The dashboard's section "settings" (its view; routes in apps/web/control/settings.py and
// doctor.py): the configuration in effect as a form generated from its schema (secrets
// masked, each value's source shown), saved back into config.toml with only the changed
// values; the variables keys come from; seam doctor's checks with their results.
import { button, el, guarded, table } from "./ui.js";
import { settingsForm } from "./settings-form.js";

function keysTable(keys) {
  return table(
    "The variables the model's keys are read from (their values are never shown)",
    [
      ["Setting", (k) => k.setting],
      ["Variable", (k) => el("code", {}, k.variable)],
      ["Set", (k) => (k.set ? "set (masked)" : "not set")],
    ],
    keys,
  );
}

function checksTable(answer) {
  return table(
    answer.ok ? "Checks: everything needed works" : "Checks: some problems found",
    [
      ["Status", (c) => el("span", { className: `check-${c.status}` }, c.status === "ok" ? "✓ ok" : "✗ failed")],
      ["Check", (c) => c.name],
      ["Detail", (c) => c.detail],
      ["Fix", (c) => c.hint],
    ],
    answer.checks,
  );
}

function doctorPart(ctx) {
  const results = el("div", { className: "doctor-results", aria: { live: "polite" } });
  const run = button("Run checks", async () => {
    results.replaceChildren(el("p", { className: "empty" }, "Running seam doctor's checks…"));
    const answer = await guarded(ctx, () => ctx.call("POST", "/api/doctor"));
    results.replaceChildren(answer ? checksTable(answer) : "");
  });
  return [
    el("h2", {}, "Checks"),
    el("p", { className: "hint" }, "The same checks as seam doctor, for this server's home."),
    run,
    results,
  ];
}

async function render(root, ctx, schema, current, checks) {
  const { fieldsets, changed } = settingsForm(schema, current.values);
  const save = el("button", { type: "submit", disabled: ctx.readOnly }, "Save");
  const form = el("form", { className: "settings-form", aria: { label: "Settings" } }, fieldsets,
    el("div", { className: "row settings-save" }, save));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = changed();
    if (!Object.keys(values).length) {
      ctx.say("Nothing changed.");
      return;
    }
    save.disabled = true;
    const answer = await guarded(ctx, () => ctx.call("PATCH", "/api/settings", { values }));
    save.disabled = false;
    if (!answer) return;
    await render(root, ctx, schema, answer, checks);
    ctx.say(`Saved ${answer.written.join(", ")}. ${answer.restart}`);
  });
  root.replaceChildren(
    ...checks,
    el("h2", {}, "Configuration"),
    el("p", { className: "hint" }, `The configuration in effect: ${current.path}`,
      current.exists ? "" : " (absent: defaults)",
      " and the environment; secrets masked. Save writes only what you changed, comments kept."),
    form,
    el("h2", {}, "Keys from the environment"),
    keysTable(current.keys),
  );
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const checks = doctorPart(ctx);
  root.replaceChildren(el("p", { className: "empty" }, "Loading the settings…"));
  const loaded = await guarded(ctx, () =>
    Promise.all([ctx.call("GET", "/api/settings/schema"), ctx.call("GET", "/api/settings")]),
  );
  if (!loaded) {
    root.replaceChildren(...checks);
    return;
  }
  const [schema, current] = loaded;
  await render(root, ctx, schema, current, checks);
}
