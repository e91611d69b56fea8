// The dashboard's Channels section: each gateway platform's state (what `seam gateway
// status` prints), the pairing codes waiting (Approve, Deny) and the paired users
// (Revoke): the same pairing file `seam pairing` changes. Routes: control/channels.py.
import { button, changed, el, guarded, table } from "./ui.js";
import { when } from "./logs-row.js";

const enc = encodeURIComponent;

function ago(now, stamp) {
  if (typeof stamp !== "number") return "nothing received";
  return `${Math.max(0, Math.round(now - stamp))} s ago`;
}

function platformRows(data) {
  return table("Platforms", [
    ["Platform", (p) => p.name],
    ["Configured", (p) => (p.configured ? "yes" : "no")],
    ["State", (p) => p.status?.state ?? "not running"],
    ["Last received", (p) => ago(data.now, p.status?.last_received_at)],
    ["Last error", (p) => p.status?.last_error ?? ""],
    ["Dead / stuck updates", (p) => updates(p.updates)],
  ], data.platforms);
}

function updates(items) {
  if (!items.length) return "none";
  return el("ul", { className: "channel-updates" },
    items.map((u) => el("li", {}, `${u.state} ${u.chat} (${u.when}): ${u.error}`)));
}

/** A row's action button's attributes: its full name, disabled for a read-only key. */
function labelled(ctx, label) {
  return { disabled: ctx.readOnly, aria: { label } };
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const data = await guarded(ctx, () => ctx.call("GET", "/api/channels"));
  if (!data) return;
  const act = async (method, path, done) => {
    await changed(ctx, () => ctx.call(method, path), () => show(root, ctx), done);
  };
  const answer = (verb, r, done) => button(verb,
    () => act("POST", `/api/channels/pairing/${enc(r.code)}/${verb.toLowerCase()}`, done),
    labelled(ctx, `${verb} ${r.code} (${r.user_name})`));
  const pending = table("Waiting for approval", [
    ["Code", (r) => el("code", {}, r.code)],
    ["User", (r) => `${r.platform}:${r.user_id}`],
    ["Name", (r) => r.user_name],
    ["Expires in", (r) => `${r.minutes_left} min`],
    ["", (r) => el("span", { className: "row" },
      answer("Approve", r, `Approved ${r.platform}:${r.user_id}.`),
      answer("Deny", r, `Denied ${r.code}.`))],
  ], data.pending, "Nobody is waiting for approval.");
  const paired = table("Paired users", [
    ["User", (u) => u.ref],
    ["Name", (u) => u.user_name],
    ["Since", (u) => when(u.approved_at).slice(0, 16)],
    ["", (u) => button("Revoke", () => act("DELETE",
      `/api/channels/${enc(u.platform)}/users/${enc(u.user_id)}`, `Revoked ${u.ref}.`),
      labelled(ctx, `Revoke ${u.ref} (${u.user_name})`))],
  ], data.paired, "Nobody is paired yet.");
  const problem = data.config_error ? [el("p", { className: "danger" }, data.config_error)] : [];
  root.replaceChildren(
    el("div", { className: "row" }, button("Refresh", () => show(root, ctx))),
    ...problem,
    platformRows(data),
    pending,
    paired,
  );
}
