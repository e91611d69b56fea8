// The chat page: sessions, the conversation, streaming turns, approvals, usage.
//
// What is shown is rebuilt from two sources and never from the page's own memory, so a
// reload or a dropped connection loses and repeats nothing: the stored transcript (GET
// /api/sessions/{name}) for finished turns, and the session's event log (SSE, resumed by
// the last event id) for turns still running. A finished turn's streamed bubble gives way
// to its stored message once the transcript holds it.
import { api, ApiError, follow } from "./api.js";
import { failedTurns, HistoryView } from "./history.js";
import { Attachments } from "./images.js";
import { failureText, providerRetry, rerunNote } from "./notes.js";
import { displayTitle, sessionItems } from "./sessions.js";
import { closeSidebar, sidebarToggle } from "./sidebar.js";
import { renderUsage } from "./usage.js";
import { LiveTurn, userBubble } from "./view.js";

const $ = (id) => document.getElementById(id);
const ui = {
  title: $("session-title"),
  personality: $("personality"),
  usage: $("usage"),
  sessions: $("sessions"),
  search: $("search"),
  searchForm: $("search-form"),
  newSession: $("new-session"),
  toggle: $("toggle-sessions"),
  sidebar: $("sidebar"),
  status: $("status"),
  log: $("log"),
  history: $("history"),
  pending: $("pending"),
  live: $("live"),
  composer: $("composer"),
  prompt: $("prompt"),
  send: $("send"),
  cancel: $("cancel"),
};
sidebarToggle(ui.toggle, ui.search);
const historyView = new HistoryView(ui.history);

const state = {
  name: null, // the open session
  detail: null,
  follower: null,
  turns: new Map(), // turn_id -> LiveTurn
  optimistic: new Map(), // submission id -> text, until the session's detail lists it
  personalities: [],
  defaultPersonality: null,
  searchSeq: 0,
  refreshing: null,
  refreshAgain: false,
};

// ---------------------------------------------------------------- status and errors

function say(text, kind = "") {
  ui.status.textContent = text;
  ui.status.className = `status ${kind}`.trim();
}

function explain(err) {
  if (err instanceof ApiError && err.status === 401) {
    say("Not signed in: open the login URL that `seam serve` printed.", "error");
  } else {
    say(err.message ?? String(err), "error");
  }
}

// ---------------------------------------------------------------- personalities

async function loadPersonalities() {
  const { personalities } = await api.personalities();
  state.personalities = personalities;
  state.defaultPersonality = personalities.find((p) => p.default)?.id ?? personalities[0]?.id ?? null;
  ui.personality.replaceChildren(
    ...personalities.map((p) => {
      const option = document.createElement("option");
      option.value = p.id;
      option.textContent = p.name && p.name !== p.id ? `${p.name} (${p.id})` : p.id;
      if (p.description) option.title = p.description;
      return option;
    }),
  );
  if (state.defaultPersonality) ui.personality.value = state.defaultPersonality;
}

/** The session's own personality (pinned when it was made); a message may name another. */
function sessionPersonality() {
  return state.detail?.personality ?? state.defaultPersonality;
}

/** What the session's last turn ran as: its message's choice, else the session's own. */
function lastPersonality() {
  const subs = state.detail?.submissions ?? [];
  const last = subs.reduce((a, b) => (b.created_at >= (a?.created_at ?? -Infinity) ? b : a), null);
  return last?.personality ?? sessionPersonality();
}

/** The switch shows what the session's last turn ran with, until the person changes it. */
function showPersonality(id) {
  if (state.personalityTouched || !id) return;
  if (state.personalities.some((p) => p.id === id)) ui.personality.value = id;
}

ui.personality.addEventListener("change", () => {
  state.personalityTouched = true;
  if (state.name) say(`Your next message goes to ${ui.personality.value}.`);
});

// ---------------------------------------------------------------- the session list

async function loadSessions() {
  const q = ui.search.value.trim();
  const mine = ++state.searchSeq;
  let sessions;
  try {
    ({ sessions } = await api.sessions(q));
  } catch (err) {
    explain(err);
    return;
  }
  if (mine !== state.searchSeq) return; // a newer search answered first
  const onOpen = (name) => {
    location.hash = encodeURIComponent(name);
    closeSidebar();
  };
  ui.sessions.replaceChildren(...sessionItems(sessions, { current: state.name, query: q, onOpen }));
}

ui.search.addEventListener("input", () => loadSessions());
ui.searchForm.addEventListener("submit", (e) => {
  e.preventDefault();
  loadSessions();
});

// ---------------------------------------------------------------- opening a session

function resetView() {
  clearTimeout(state.lookAgain);
  state.personalityTouched = false;
  state.follower?.close();
  state.follower = null;
  state.turns.clear();
  state.optimistic.clear();
  state.detail = null;
  historyView.clear();
  ui.pending.replaceChildren();
  ui.live.replaceChildren();
  ui.usage.textContent = "";
}

async function openSession(name) {
  resetView();
  state.name = name;
  state.scrollOnOpen = true; // a session opens at its latest message
  ui.title.textContent = name;
  for (const b of ui.sessions.querySelectorAll("button.session")) {
    if (b.dataset.name === name) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
  try {
    await refresh();
  } catch (err) {
    explain(err);
    return;
  }
  if (state.name !== name) return;
  showPersonality(lastPersonality());
  followEvents(name);
}

/** Follow the session's event log from where the transcript shown leaves off (the start
 * of a running turn, which shows what it streamed so far); finished turns are the
 * transcript's to show (see `settle`). */
function followEvents(name) {
  const after = state.detail?.events_after ?? 0;
  state.follower = follow(name, after, (event) => onEvent(name, event), onStreamState);
}

function onStreamState(kind) {
  if (kind === "open") {
    if (ui.status.dataset.stream === "reconnecting") say("Reconnected.");
    ui.status.dataset.stream = "open";
  } else {
    ui.status.dataset.stream = "reconnecting";
    say("Connection lost; reconnecting…", "warn");
  }
}

function startNewSession() {
  history.pushState(null, "", location.pathname);
  resetView();
  state.name = null;
  ui.title.textContent = "New session";
  ui.personality.value = state.defaultPersonality ?? ui.personality.value;
  for (const b of ui.sessions.querySelectorAll("button.session")) b.removeAttribute("aria-current");
  updateButtons();
  say("A new session starts with your first message.");
  ui.prompt.focus();
}

ui.newSession.addEventListener("click", () => {
  startNewSession();
  closeSidebar();
});

// ---------------------------------------------------------------- transcript and events

/** Fetch the session's detail and rebuild the stored part; coalesces concurrent calls. */
async function refresh() {
  const name = state.name;
  if (state.refreshing && state.refreshingName === name) {
    state.refreshAgain = true;
    return state.refreshing;
  }
  state.refreshingName = name;
  state.refreshing = (async () => {
    do {
      state.refreshAgain = false;
      const detail = await api.session(name);
      if (state.name !== name) return;
      state.detail = detail;
      renderHistory(detail);
      settle(detail);
      renderUsage(ui.usage, detail.usage);
      updateButtons();
      if (state.scrollOnOpen) {
        state.scrollOnOpen = false;
        scrollToEnd();
      }
      lookAgainSoon(detail);
    } while (state.refreshAgain && state.name === name);
  })();
  const mine = state.refreshing;
  try {
    await mine;
  } finally {
    if (state.refreshing === mine) state.refreshing = null;
  }
}

/**
 * A turn's `done` comes just before its submission is settled in the store, so a refresh
 * right after it can still see the submission running. With nothing streaming, look again
 * shortly (a few times) so Cancel and the queue show the truth.
 */
function lookAgainSoon(detail) {
  clearTimeout(state.lookAgain);
  const stale = unsettled(detail).some((s) => s.state === "running") && !streaming();
  if (!stale) {
    state.lookAgainTries = 0;
    return;
  }
  if ((state.lookAgainTries = (state.lookAgainTries ?? 0) + 1) > 5) return;
  const name = state.name;
  state.lookAgain = setTimeout(() => {
    if (state.name === name) refresh().catch(explain);
  }, 400 * state.lookAgainTries);
}

function renderHistory(detail) {
  historyView.show(historyShown(detail), failedTurns(detail), state.name);
  ui.title.textContent = displayTitle(detail);
}

/** The messages the history shows: the running turn's stored steps are shown by its
 * streamed bubble (replayed from the event log), so the transcript up to that turn's
 * input only while it streams. */
function historyShown(detail) {
  const running = unsettled(detail).find((s) => s.state === "running");
  if (!running || !streaming()) return detail.messages;
  const at = detail.messages.findLastIndex((m) => m.role === "user" && m.content === running.input);
  return at >= 0 ? detail.messages.slice(0, at + 1) : detail.messages;
}

function streaming() {
  for (const turn of state.turns.values()) if (!turn.finished) return true;
  return false;
}

function unsettled(detail) {
  return (detail?.submissions ?? [])
    .filter((s) => s.state === "queued" || s.state === "running")
    .sort((a, b) => a.created_at - b.created_at);
}

/** Drop streamed bubbles the transcript now holds; show inputs it does not hold yet. */
function stored(detail) {
  const messages = detail?.messages ?? [];
  return new Set(messages.filter((m) => m.role === "assistant" && m.content).map((m) => m.content.trim()));
}

/** Whether the history drawn from `detail` already shows a finished turn: its answer, or
 * its failure (a failed turn's `done` has no text; history.js shows its submission's
 * error). A turn that ended while the session was being opened is streamed too, and
 * must be gone before the frame that would show it twice. */
function shownAlready(turn, detail) {
  if (!turn.failed) return stored(detail).has(turn.finalText?.trim());
  if (!detail) return false;
  const said = failureText(turn.error).trim();
  return [...failedTurns(detail).values()].some((error) => failureText(error).trim() === said);
}

function settle(detail) {
  const answers = stored(detail);
  const waiting = unsettled(detail);
  for (const [id, turn] of state.turns) {
    // Once nothing runs, the transcript is the whole truth.
    const inTranscript = turn.finished && (turn.failed
      ? !waiting.some((s) => s.state === "running")
      : waiting.length === 0 || !turn.finalText?.trim() || answers.has(turn.finalText.trim()));
    const abandoned = !turn.finished && waiting.length === 0;
    if (inTranscript || abandoned) {
      turn.node.remove();
      state.turns.delete(id);
    }
  }
  const known = new Set(detail.submissions.map((s) => s.id));
  const bubbles = [];
  for (const sub of waiting) {
    if (sub.steps > 0) {
      // Its turn wrote its input to the transcript (with the turn's first write, the
      // model's first reply): never show it twice. Queued again after a failure, it waits
      // to be tried again.
      if (sub.state === "queued" && sub.error) bubbles.push(rerunNote(sub));
      continue;
    }
    bubbles.push(userBubble(sub.input, sub.state === "queued" ? "queued" : ""));
  }
  for (const [id, text] of state.optimistic) {
    if (known.has(id)) state.optimistic.delete(id);
    else bubbles.push(userBubble(text, "queued"));
  }
  ui.pending.replaceChildren(...bubbles);
}

/** A provider's retry, shown until the attempt starts (the turn's next event). */
function showRetry(event) {
  const stick = nearBottom();
  clearRetries();
  ui.live.append(providerRetry(event));
  if (stick) scrollToEnd();
}

function clearRetries() {
  for (const note of ui.live.querySelectorAll(".retry-note")) note.remove();
}

function onEvent(name, event) {
  if (state.name !== name) return;
  if (event.type === "retry") return showRetry(event);
  clearRetries(); // any other event: the attempt started, or the turn ended
  let turn = state.turns.get(event.turn_id);
  if (!turn) {
    turn = new LiveTurn(event.turn_id, (callId, decision) => api.approve(name, callId, decision));
    state.turns.set(event.turn_id, turn);
    // Shown from the next frame: a finished turn replayed on opening is gone by then.
    requestAnimationFrame(() => {
      if (state.turns.get(turn.turnId) !== turn) return;
      const stick = nearBottom();
      ui.live.append(turn.node);
      if (stick) scrollToEnd();
    });
  }
  const stick = nearBottom();
  turn.apply(event);
  if (event.type === "run_start") showPersonality(event.personality);
  updateButtons();
  if (stick) scrollToEnd();
  if (event.type === "tool_approval_required" && !turn.finished) {
    say(`${event.name} wants to run ${event.command}: answer in the conversation.`, "warn");
  } else if (event.type === "tool_approval_response") {
    say("");
  }
  if (event.type === "done") {
    if (shownAlready(turn, state.detail)) {
      turn.node.remove(); // the transcript shown already holds this answer (or failure)
      state.turns.delete(turn.turnId);
    }
    refresh().catch(explain);
    loadSessions();
  } else if (event.type === "run_start") {
    // The history drawn before this turn streamed may hold its stored steps: drawn again
    // now, from the same frame as the turn, never both (the read below brings the rest;
    // turns unchanged keep their nodes).
    if (state.detail) renderHistory(state.detail);
    refresh().catch(explain); // the turn's input is in the transcript now
  }
}

function busy() {
  return unsettled(state.detail).length > 0 || state.optimistic.size > 0 || streaming();
}

function updateButtons() {
  const running = Boolean(state.name) && busy();
  ui.cancel.disabled = !running;
  ui.log.setAttribute("aria-busy", String(running));
}

function nearBottom() {
  const box = document.scrollingElement;
  const log = ui.log;
  const scroller = log.scrollHeight > log.clientHeight ? log : box;
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
}

function scrollToEnd() {
  ui.log.scrollTop = ui.log.scrollHeight;
  const box = document.scrollingElement; // on a narrow screen the page itself may scroll
  if (box) box.scrollTop = box.scrollHeight;
}

// ---------------------------------------------------------------- sending and cancelling

/** A fresh submission id (randomUUID needs a secure context; a LAN address is not one). */
function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A new session named after its first message (readable in the list and the URL). */
async function createSession(text, personality) {
  const base = { ...(personality ? { personality } : {}) };
  const slug = text.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, " ").trim()
    .split(" ").slice(0, 6).join("-").slice(0, 48);
  if (slug) {
    const suffix = newId().replace(/[^0-9a-f]/g, "").slice(-4);
    try {
      return await api.createSession({ ...base, name: `${slug}-${suffix}` });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
    }
  }
  return api.createSession(base); // the server picks a free name
}

const attachments = new Attachments($("attachments"), $("image-input"), ui.prompt, (t) => say(t, "error"));

async function send() {
  const text = ui.prompt.value.trim();
  if (!text && !attachments.count) return;
  ui.send.disabled = true;
  try {
    const chosen = ui.personality.value || null;
    if (!state.name) {
      const created = await createSession(text || "image", chosen);
      history.replaceState(null, "", `#${encodeURIComponent(created.name)}`);
      await openSession(created.name);
    }
    const body = { text, submission_id: newId() };
    if (chosen && chosen !== sessionPersonality()) body.personality = chosen;
    if (attachments.count) body.images = attachments.take();
    state.optimistic.set(body.submission_id, text);
    ui.pending.append(userBubble(text, "queued"));
    ui.prompt.value = "";
    scrollToEnd();
    updateButtons();
    await api.send(state.name, body);
    // A link to a session that did not exist yet (`/#name`) opened no event stream: the
    // first message made the session, so follow it now, or its answer would never show.
    if (!state.follower) followEvents(state.name);
    say("");
    await refresh();
    loadSessions();
  } catch (err) {
    explain(err);
  } finally {
    ui.send.disabled = false;
    ui.prompt.focus();
  }
}

ui.composer.addEventListener("submit", (e) => {
  e.preventDefault();
  send();
});

ui.prompt.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});

ui.cancel.addEventListener("click", async () => {
  if (!state.name) return;
  ui.cancel.disabled = true;
  try {
    const { cancelled } = await api.cancel(state.name);
    say(cancelled.length ? "Cancelled." : "Nothing to cancel.");
    state.optimistic.clear();
    await refresh();
  } catch (err) {
    explain(err);
  }
});

// ---------------------------------------------------------------- start

function hashName() {
  const raw = location.hash.slice(1);
  // `#/<section>` is the dashboard's navigation (control/nav.js), not a session.
  return raw && !raw.startsWith("/") ? decodeURIComponent(raw) : null;
}

// The dashboard's Sessions section renamed, forked or deleted one: list them again.
window.addEventListener("seam:sessions-changed", () => loadSessions());

window.addEventListener("hashchange", () => {
  const name = hashName();
  if (name && name !== state.name) openSession(name);
});

async function start() {
  try {
    await loadPersonalities();
  } catch (err) {
    explain(err);
    return;
  }
  await loadSessions();
  const name = hashName();
  if (name) await openSession(name);
  else startNewSession();
  document.body.dataset.ready = "true";
}

start();
