// The dashboard's MCP section: each configured server as a card with its state (connected,
// failed with the reason...), its tools with whether each is offered and asks for approval,
// and its `approval` setting, changed here and written to config.toml.
// Routes: apps/web/control/mcp.py.
import { el, field, guarded, table } from "./ui.js";

const enc = encodeURIComponent;
const APPROVALS = [
  ["auto", "auto: ask unless the tool is read-only or not destructive"],
  ["always", "always: every tool asks"],
  ["never", "never: no tool asks"],
];

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  ctx.say("Checking the servers (a server not started yet is started)…");
  const found = await guarded(ctx, () => ctx.call("GET", "/api/mcp/servers"));
  if (!found) return;
  ctx.say("");
  if (!found.servers.length) {
    root.replaceChildren(el("p", { className: "empty" },
      "No MCP servers configured ([mcp.servers.NAME] in config.toml)."));
    return;
  }
  root.replaceChildren(...found.servers.map((s) => card(s, ctx, () => show(root, ctx))));
}

function card(server, ctx, again) {
  const title = `mcp-title-${server.name}`;
  return el(
    "article",
    { className: "mcp-card", aria: { labelledby: title } },
    el("h2", { id: title }, server.name),
    el("p", {}, el("span", { className: `mcp-state mcp-${server.state.replace(/\W+/g, "-")}` },
      server.state), " ", server.transport, " ", el("code", {}, server.target)),
    server.reason ? el("p", { className: "mcp-reason danger" }, `Reason: ${server.reason}`) : null,
    filters(server),
    approvalForm(server, ctx, again),
    tools(server),
  );
}

function filters(server) {
  if (!server.allow.length && !server.deny.length) return null;
  const parts = [];
  if (server.allow.length) parts.push(`allow ${server.allow.join(", ")}`);
  if (server.deny.length) parts.push(`deny ${server.deny.join(", ")}`);
  return el("p", { className: "hint" }, `Tools filter: ${parts.join("; ")}`);
}

function approvalForm(server, ctx, again) {
  const select = el("select", { name: "approval", disabled: ctx.readOnly },
    APPROVALS.map(([value, label]) =>
      el("option", { value, selected: value === server.approval }, label)));
  const save = el("button", { type: "submit", disabled: ctx.readOnly }, "Save approval");
  const form = el("form", { className: "row" }, field("Approval", select), save);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    save.disabled = true;
    const done = await guarded(ctx, () => ctx.call("PUT",
      `/api/mcp/servers/${enc(server.name)}/approval`, { approval: select.value }));
    save.disabled = false;
    if (!done) return;
    await again();
    ctx.say(`${done.name}: approval is now ${done.approval} (in config.toml)`);
  });
  return form;
}

function tools(server) {
  const what = (t) => (!t.offered ? "not offered (tools filter)" : t.asks ? "asks first" : "runs");
  return el("div", {},
    listOf(server),
    table(`Tools of ${server.name}`,
      [["Tool", (t) => el("code", {}, t.name)], ["When called", what]],
      server.tools, "No tools listed."));
}

function listOf(server) {
  const extras = [];
  if (server.resources) extras.push("resources (mcp__resources, mcp__read_resource)");
  extras.push(...server.prompts.map((p) => `prompt: ${p}`));
  if (!extras.length) return null;
  return el("ul", { className: "mcp-extras" }, extras.map((x) => el("li", {}, x)));
}
