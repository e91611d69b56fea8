// An editor as an npm program would be one: the official ACP TypeScript SDK
// (@agentclientprotocol/sdk) spawns `seam acp` and drives a thread: initialize, new,
// prompt, pick a model, list, close. Prints what it saw as one JSON object.
// Usage: node client.mjs SEAM_EXECUTABLE PROJECT_DIR
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";

const [seam, project] = process.argv.slice(2);
const agent = spawn(seam, ["acp"], { cwd: project, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const seen = { text: "", titles: [], kinds: [] };

const app = acp
  .client({ name: "seam-test-editor" })
  .onNotification("session/update", ({ params }) => {
    const update = params.update;
    seen.kinds.push(update.sessionUpdate);
    if (update.sessionUpdate === "agent_message_chunk") seen.text += update.content.text;
    if (update.sessionUpdate === "session_info_update") seen.titles.push(update.title);
  })
  .onRequest("session/request_permission", () => ({ outcome: { outcome: "cancelled" } }));

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
  });
  const created = await ctx.request("session/new", { cwd: project, mcpServers: [] });
  const sessionId = created.sessionId;
  const prompt = (text) =>
    ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  const first = await prompt("Fix the flaky login test in CI");
  const models = created.configOptions[0].options.map((o) => o.value);
  const picked = await ctx.request("session/set_config_option", {
    sessionId, configId: "model", value: models[models.length - 1],
  });
  const second = await prompt("and now?");
  const listed = await ctx.request("session/list", { cwd: project });
  await ctx.request("session/close", { sessionId });
  let afterClose = "";
  try {
    await prompt("still there?");
  } catch (error) {
    afterClose = JSON.stringify(error.data ?? error.message);
  }
  return {
    agent: init.agentInfo, capabilities: init.agentCapabilities, sessionId, models,
    current: picked.configOptions[0].currentValue,
    stops: [first.stopReason, second.stopReason], listed: listed.sessions, afterClose,
  };
});
agent.stdin.end();
console.log(JSON.stringify({ ...result, ...seen }));
agent.kill();
