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

/**
 * The transcript drawn into `container` a turn at a time. A session's page reads the
 * transcript again at each turn's start and end; drawn whole each time, a long session
 * rendered every answer's Markdown twice a turn (300 turns: about 100 ms a read). Here a
 * turn drawn before and unchanged since keeps its nodes (and a tool block opened in it
 * stays open); the turns from the first changed one on are drawn again.
 */
export class HistoryView {
  constructor(container) {
    this.container = container;
    this.drawn = []; // [{ key, nodes }], in order
  }

  show(messages, failures, session) {
    const turns = splitTurns(messages, failures, session);
    let same = 0;
    while (same < turns.length && same < this.drawn.length && this.drawn[same].key === turns[same].key) {
      same += 1;
    }
    for (const turn of this.drawn.splice(same)) for (const node of turn.nodes) node.remove();
    for (const turn of turns.slice(same)) {
      const nodes = historyNodes(turn.messages, turn.failures, session);
      this.container.append(...nodes);
      this.drawn.push({ key: turn.key, nodes });
    }
  }

  clear() {
    this.container.replaceChildren();
    this.drawn = [];
  }
}

/** `messages` cut at each person's message, each part with its failure (keyed by its
 * first message, as `historyNodes` wants) and a key that changes when anything shown of
 * it does. */
function splitTurns(messages, failures, session) {
  const turns = [];
  let start = 0;
  const cut = (end) => {
    if (end <= start) return;
    const part = messages.slice(start, end);
    const failure = failures.get(start) ?? null;
    turns.push({
      messages: part,
      failures: failure === null ? new Map() : new Map([[0, failure]]),
      key: JSON.stringify([session, failure, part]),
    });
  };
  messages.forEach((m, i) => {
    if (m.role !== "user") return;
    cut(i);
    start = i;
  });
  cut(messages.length);
  return turns;
}
