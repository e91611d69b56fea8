// The dashboard's section "keys" (its view; routes in apps/web/control/keys.py): create a
// key (shown once, in a field to copy), list the keys (never their hashes), revoke one
// after a confirmation in its own row.
import { button, changed, el, field, guarded, table } from "./ui.js";

const SCOPES = [
  ["full", "full: everything the tenant may do"],
  ["chat", "chat: sessions and messages only"],
  ["read", "read: GET routes only"],
];

function when(seconds) {
  return new Date(seconds * 1000).toLocaleString();
}

/** The new key, once: a read-only field to copy it from, and a warning. */
function shownOnce(made) {
  const input = el("input", { type: "text", readOnly: true, value: made.key, className: "key-value" });
  const copy = button("Copy", async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(made.key);
    } catch {
      document.execCommand?.("copy");
    }
  });
  return el(
    "div",
    { className: "key-once", role: "alert" },
    el("p", {}, el("strong", {}, `Key "${made.name}" created. `),
      "Copy it now: it is shown only this once (only its hash is kept)."),
    el("div", { className: "row" }, field("New key", input), copy),
  );
}

function createForm(ctx, refresh, shown) {
  const name = el("input", { type: "text", name: "name", required: true, maxLength: 100, autocomplete: "off" });
  const tenant = el("input", { type: "text", name: "tenant", placeholder: "local (the owner)", maxLength: 100 });
  const scope = el("select", { name: "scope" }, SCOPES.map(([v, text]) => el("option", { value: v }, text)));
  const form = el(
    "form",
    { className: "key-create", aria: { label: "Create a key" } },
    el("div", { className: "row" }, field("Name", name), field("Tenant", tenant), field("Scope", scope)),
    el("button", { type: "submit", disabled: ctx.readOnly }, "Create key"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: name.value, scope: scope.value };
    if (tenant.value.trim()) body.tenant = tenant.value.trim();
    await changed(ctx, () => ctx.call("POST", "/api/keys", body), async (made) => {
      form.reset();
      shown.replaceChildren(shownOnce(made));
      await refresh();
    }, (made) => `Created key ${made.name}.`);
  });
  return form;
}

/** The Revoke cell of a row: asks in place, then revokes. */
function revokeCell(ctx, key, refresh) {
  const cell = el("span", { className: "row" });
  const ask = () => {
    const yes = button(`Yes, revoke ${key.name}`, async () => {
      await changed(ctx, () => ctx.call("DELETE", `/api/keys/${encodeURIComponent(key.name)}`), refresh,
        `Revoked key ${key.name}: its next request is refused.`);
    }, { className: "danger" });
    const no = button("Cancel", async () => {
      cell.replaceChildren(start());
    });
    cell.replaceChildren(el("span", {}, `Revoke ${key.name}?`), yes, no);
    yes.focus();
  };
  const start = () =>
    button("Revoke", async () => ask(), { aria: { label: `Revoke ${key.name}` }, disabled: ctx.readOnly });
  cell.replaceChildren(start());
  return cell;
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const list = el("div", { className: "key-list" });
  const shown = el("div");
  const refresh = async () => {
    const answer = await guarded(ctx, () => ctx.call("GET", "/api/keys"));
    if (!answer) return;
    list.replaceChildren(
      table(
        "API keys",
        [
          ["Name", (k) => k.name],
          ["Tenant", (k) => (k.owner ? `${k.tenant} (owner)` : k.tenant)],
          ["Scope", (k) => k.scope],
          ["Starts with", (k) => el("code", {}, `${k.prefix}…`)],
          ["Created", (k) => when(k.created_at)],
          ["", (k) => revokeCell(ctx, k, refresh)],
        ],
        answer.keys,
        "No keys yet: the page itself needs none.",
      ),
    );
  };
  root.replaceChildren(
    el("h2", {}, "Create a key"),
    el("p", { className: "hint" },
      "A key calls the API as its tenant (the owner's is local). The CLI's seam keys sees the same keys."),
    createForm(ctx, refresh, shown),
    shown,
    list,
  );
  await refresh();
}
