// Building the conversation's DOM: stored messages (history) and live turns (events).
import { renderMarkdown } from "./markdown.js";
import { errorBlock } from "./notes.js";

export const DECISIONS = [
  ["once", "Allow once"],
  ["session", "Allow for this session"],
  ["always", "Always allow"],
  ["deny", "Deny"],
  ["never", "Never allow"],
];

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

export function userBubble(text, extra = "") {
  const body = el("div", { class: "body plain", text });
  return el("article", { class: `msg user ${extra}`.trim(), "aria-label": "You" }, body);
}

function assistantShell(label = "Seam") {
  const meta = el("div", { class: "meta", text: label });
  const body = el("div", { class: "body md" });
  return { node: el("article", { class: "msg assistant", "aria-label": label }, meta, body), body, meta };
}

/** A tool call as a collapsible block: arguments, progress, result, approval. */
export function toolBlock(callId, name, args) {
  const summary = el("summary", {}, el("span", { class: "tool-name", text: name }),
    el("span", { class: "tool-state", text: "running" }));
  const argsPre = el("pre", { class: "tool-args" }, el("code", { text: args || "" }));
  const progress = el("div", { class: "tool-progress" });
  const result = el("pre", { class: "tool-result", hidden: "" });
  const node = el("details", { class: "tool", "data-call-id": callId }, summary, argsPre, progress, result);
  return {
    node,
    state: summary.querySelector(".tool-state"),
    progress,
    result,
  };
}

function finishTool(block, text, isError) {
  block.result.hidden = false;
  block.result.textContent = text;
  block.state.textContent = isError ? "error" : "done";
  block.node.classList.toggle("failed", Boolean(isError));
}

/** A stored assistant message (and its tool calls, with results from `toolResults`). */
export function historyAssistant(message, toolResults, into = null) {
  const shell = into ? { node: into, body: el("div", { class: "body md" }) } : assistantShell();
  if (into) into.append(shell.body);
  if (message.content) renderMarkdown(shell.body, message.content);
  else shell.body.hidden = true;
  for (const call of message.tool_calls ?? []) {
    const block = toolBlock(call.id, call.name, call.arguments);
    const result = toolResults.get(call.id);
    const text = result?.content ?? "";
    if (result !== undefined) finishTool(block, text, text.startsWith("error"));
    else block.state.textContent = "no result";
    shell.node.append(block.node);
  }
  if (message.interrupted) shell.node.append(el("p", { class: "note", text: "(interrupted)" }));
  return shell.node;
}

/**
 * A turn being streamed: text deltas render as Markdown as they come, tool activity as
 * collapsible blocks, approvals as five buttons. `answer(callId, decision)` sends a choice.
 */
export class LiveTurn {
  constructor(turnId, answer) {
    this.turnId = turnId;
    this.answer = answer;
    this.finished = false;
    this.error = null; // what the model's error said, when one ended the turn
    this.finalText = null;
    this.segments = []; // [{ body, text }] text between tool calls
    this.tools = new Map();
    const shell = assistantShell();
    this.node = shell.node;
    this.meta = shell.meta;
    this.node.classList.add("live");
    this.node.dataset.turnId = turnId;
    this.current = { body: shell.body, text: "" };
    this.segments.push(this.current);
    this.pendingRender = false;
  }

  /** Whether an error ended the turn. */
  get failed() {
    return this.error !== null;
  }

  apply(event) {
    switch (event.type) {
      case "run_start":
        this.meta.textContent = `Seam · ${event.personality} · ${event.model}`;
        break;
      case "text_delta":
        this.current.text += event.text;
        this.scheduleRender();
        break;
      case "thinking_delta":
        this.thinking(event.text);
        break;
      case "tool_start": {
        const block = toolBlock(event.call_id, event.name, event.arguments);
        this.tools.set(event.call_id, block);
        this.node.append(block.node);
        this.current = { body: el("div", { class: "body md" }), text: "" };
        this.segments.push(this.current);
        this.node.append(this.current.body);
        break;
      }
      case "tool_progress":
        this.tools.get(event.call_id)?.progress.append(el("div", { text: event.message }));
        break;
      case "tool_end": {
        const block = this.tools.get(event.call_id);
        if (block) finishTool(block, event.result, event.is_error);
        break;
      }
      case "tool_approval_required":
        this.approval(event);
        break;
      case "tool_approval_response":
        this.approved(event.call_id, event.decision);
        break;
      case "notice":
      case "context_warning":
      case "context_compacted":
        this.note(event.message ?? `context: ${event.type.replace("context_", "")}`);
        break;
      case "error":
        this.error = event.message ?? "";
        this.node.append(errorBlock(event.message, true));
        break;
      case "halt":
        this.note(`stopped: ${event.message}`, "error");
        break;
      case "done":
        this.finished = true;
        this.finalText = event.text;
        this.node.classList.remove("live");
        this.node.classList.add("finished");
        if (event.finish_reason && event.finish_reason !== "stop") {
          this.note(`(${event.finish_reason})`);
        }
        this.render();
        break;
      default:
        break;
    }
  }

  // Deltas arrive far faster than a person reads: re-render at most once a frame.
  scheduleRender() {
    if (this.pendingRender) return;
    this.pendingRender = true;
    requestAnimationFrame(() => this.render());
  }

  render() {
    this.pendingRender = false;
    for (const segment of this.segments) {
      if (segment.rendered === segment.text) continue;
      renderMarkdown(segment.body, segment.text);
      segment.rendered = segment.text;
      segment.body.dataset.text = segment.text;
    }
  }

  /** The text streamed so far (what a reload must show once). */
  text() {
    return this.segments.map((s) => s.text).join("");
  }

  thinking(text) {
    if (!this.thinkingBlock) {
      const pre = el("pre", { class: "thinking-text" });
      this.thinkingBlock = el("details", { class: "thinking" }, el("summary", { text: "Thinking" }), pre);
      this.meta.after(this.thinkingBlock);
    }
    this.thinkingBlock.querySelector("pre").textContent += text;
  }

  note(text, kind = "") {
    this.node.append(el("p", { class: `note ${kind}`.trim(), text }));
  }

  approval(event) {
    let block = this.tools.get(event.call_id);
    if (!block) {
      block = toolBlock(event.call_id, event.name, event.command);
      this.tools.set(event.call_id, block);
      this.node.append(block.node);
    }
    block.node.open = true;
    block.state.textContent = "waiting for your answer";
    const question = el("p", { class: "question" },
      el("strong", { text: `${event.name} wants to run: ` }), el("code", { text: event.command }));
    const reason = event.reason ? el("p", { class: "reason", text: event.reason }) : null;
    const buttons = el("div", { class: "decisions", role: "group", "aria-label": "Approve or deny" });
    for (const [decision, label] of DECISIONS) {
      const button = el("button", { type: "button", "data-decision": decision, text: label });
      if (decision === "deny" || decision === "never") button.classList.add("danger");
      button.addEventListener("click", async () => {
        for (const b of buttons.querySelectorAll("button")) b.disabled = true;
        try {
          await this.answer(event.call_id, decision);
        } catch (err) {
          for (const b of buttons.querySelectorAll("button")) b.disabled = false;
          block.state.textContent = `could not answer: ${err.message}`;
        }
      });
      buttons.append(button);
    }
    const box = el("div", { class: "approval" }, question, reason, buttons);
    block.approval = box;
    block.node.append(box);
  }

  approved(callId, decision) {
    const block = this.tools.get(callId);
    if (!block) return;
    const approvedNow = !["deny", "never", "always_deny", "timeout", "unavailable"].includes(decision);
    block.state.textContent = decision === "unavailable" ? "not run (no one was available to approve it)"
      : approvedNow ? `approved (${decision})` : `denied (${decision})`;
    if (block.approval) {
      for (const b of block.approval.querySelectorAll("button")) b.disabled = true;
      block.approval.classList.add("answered");
    }
  }
}
