// The stored transcript as the conversation shows it: one bubble per turn, and a failed
// turn's error (the provider's reason, kept by its submission) after what it did say.
import { imageStrip } from "./images.js";
import { errorBlock } from "./notes.js";
import { historyAssistant, userBubble } from "./view.js";

/** Each failed submission's error, by the index of its input in the transcript. */
export function failedTurns(detail) {
  const subs = [...(detail.submissions ?? [])].sort((a, b) => a.created_at - b.created_at);
  const out = new Map();
  let next = 0;
  detail.messages.forEach((m, i) => {
    if (m.role !== "user") return;
    const at = subs.findIndex((s, j) => j >= next && s.input === m.content);
    if (at < 0) return;
    next = at + 1;
    const sub = subs[at];
    if (sub.state === "settled" && sub.outcome === "failed" && sub.error) out.set(i, sub.error);
    // A spending limit stopped the turn: its result is the message naming the limit.
    if (sub.outcome === "completed" && sub.finish_reason === "budget") out.set(i, sub.result);
  });
  return out;
}

function failureBubble(message) {
  const node = document.createElement("article");
  node.className = "msg assistant failed";
  node.setAttribute("aria-label", "Seam");
  node.append(errorBlock(message));
  return node;
}

/**
 * The nodes of `messages`: consecutive assistant messages (steps around tool calls) share
 * one bubble; a call's result is the tool message that follows its step (ids may repeat
 * across turns); `failures` (from `failedTurns`) end their turns; a person's images show
 * under their message (`session`: whose image route serves them).
 */
export function historyNodes(messages, failures, session = null) {
  const nodes = [];
  let bubble = null;
  let failure = null;
  const endTurn = () => {
    if (failure) nodes.push(failureBubble(failure));
    failure = null;
  };
  messages.forEach((m, i) => {
    if (m.role === "user") {
      endTurn();
      bubble = null;
      failure = failures.get(i) ?? null;
      const said = userBubble(m.content);
      const images = imageStrip(session, m.images);
      if (images) said.append(images);
      nodes.push(said);
    } else if (m.role === "assistant") {
      const results = new Map();
      for (let j = i + 1; j < messages.length && messages[j].role === "tool"; j++) {
        if (messages[j].tool_call_id) results.set(messages[j].tool_call_id, messages[j]);
      }
      const node = historyAssistant(m, results, bubble);
      if (!bubble) nodes.push(node);
      bubble = node;
    }
  });
  endTurn();
  return nodes;
}
