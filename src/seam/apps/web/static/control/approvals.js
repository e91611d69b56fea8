// The dashboard's section "approvals" (its view; routes in apps/web/control/approvals.py):
// the requests waiting for a person in any session (answered here as in the chat), and
// the remembered always-allow and always-deny lists, each entry removable. While the
// section is open both are looked at again every few seconds (and shown again if changed).
import { button, el, guarded, table } from "./ui.js";

const POLL_MS = 3000;
// The chat's answers, in its order and words.
const ANSWERS = [
  ["once", "Allow once"],
  ["session", "Allow for this session"],
  ["always", "Always allow"],
  ["deny", "Deny"],
  ["never", "Never allow"],
];
const LISTS = [
  ["always", "Always allowed", "Nothing is always allowed."],
  ["always_deny", "Always denied", "Nothing is always denied."],
];
let polling = null;

function ago(seconds) {
  const s = Math.max(0, Math.round(Date.now() / 1000 - seconds));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  return `${Math.floor(s / 3600)} h ago`;
}

function answerButtons(entry, ctx, refresh) {
  const who = `${entry.tool} in ${entry.session}`;
  return el("div", { className: "decisions", role: "group", aria: { label: `Answer ${who}` } },
    ANSWERS.map(([decision, text]) => button(text, async () => {
      const body = { tenant: entry.tenant, session: entry.session, call_id: entry.call_id, decision };
      const done = await guarded(ctx, () => ctx.call("POST", "/api/approvals/pending", body));
      await refresh();
      if (done) ctx.say(`${text}: ${entry.command}`);
    }, { dataset: { decision }, className: decision === "deny" || decision === "never" ? "danger" : "" })));
}

function pendingTable(pending, ctx, refresh) {
  const columns = [
    ["Session", (p) => (p.tenant === ctx.who?.tenant ? p.session : `${p.session} (${p.tenant})`)],
    ["Tool", (p) => p.tool],
    ["Command", (p) => el("code", {}, p.command)],
    ["Reason", (p) => p.reason],
    ["Waiting since", (p) => ago(p.since)],
  ];
  if (!ctx.readOnly) columns.push(["Answer", (p) => answerButtons(p, ctx, refresh)]);
  return table("Approvals waiting for an answer", columns, pending, "Nothing is waiting for an answer.");
}

function rememberedTable(kind, caption, empty, commands, ctx, refresh) {
  const columns = [["Command or tool", (c) => el("code", {}, c)]];
  if (!ctx.readOnly) {
    columns.push(["", (c) => button("Remove", async () => {
      const path = `/api/approvals/remembered/${kind}?command=${encodeURIComponent(c)}`;
      const done = await guarded(ctx, () => ctx.call("DELETE", path));
      await refresh();
      if (done) ctx.say(`Removed ${c}: the next identical command is asked about again.`);
    }, { aria: { label: `Remove ${c} from ${caption.toLowerCase()}` } })]);
  }
  return table(caption, columns, commands, empty);
}

async function showPending(part, ctx, refresh) {
  const answer = await guarded(ctx, () => ctx.call("GET", "/api/approvals/pending"));
  if (!answer) return;
  const text = JSON.stringify(answer.pending);
  if (part.dataset.shown === text) return; // unchanged: keep the focus where it is
  part.dataset.shown = text;
  part.replaceChildren(pendingTable(answer.pending, ctx, refresh));
}

async function showRemembered(part, ctx) {
  const lists = await guarded(ctx, () => ctx.call("GET", "/api/approvals/remembered"));
  if (!lists) return;
  const text = JSON.stringify(lists);
  if (part.dataset.shown === text) return; // unchanged: keep the focus where it is
  part.dataset.shown = text;
  const refresh = () => showRemembered(part, ctx);
  part.replaceChildren(
    ...LISTS.map(([kind, caption, empty]) => rememberedTable(kind, caption, empty, lists[kind], ctx, refresh)),
    el("p", { className: "hint" }, `Kept in ${lists.path}; every running session reads it before its next command.`),
  );
}

function poll(root, refresh) {
  clearTimeout(polling);
  polling = setTimeout(async () => {
    const view = root.closest(".view");
    if (!root.isConnected || view?.hidden) return; // left the section: stop
    await refresh();
    poll(root, refresh);
  }, POLL_MS);
}

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  const pending = el("div", { className: "approvals-pending" });
  const remembered = el("div", { className: "approvals-remembered" });
  // An answer may be a lasting one: both lists are read again after it.
  const refresh = async () => {
    await Promise.all([showPending(pending, ctx, refresh), showRemembered(remembered, ctx)]);
  };
  root.replaceChildren(
    el("h2", {}, "Waiting for an answer"),
    pending,
    el("div", { className: "row" }, button("Refresh", async () => {
      delete pending.dataset.shown;
      delete remembered.dataset.shown;
      await refresh();
    })),
    el("h2", {}, "Remembered answers"),
    remembered,
  );
  await refresh();
  poll(root, refresh);
}
