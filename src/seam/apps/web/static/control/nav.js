// The navigation bar: one link a section (`#/cron`), the chat by default. The sections a
// caller may open come from GET /api/control, so a tenant's key never sees an owner-only
// label. A section's view is its own module (`./<id>.js`, exporting `show(root, ctx)`),
// imported on its first visit and shown again (refreshed) on each later one.
import { call } from "../api.js";

const links = document.getElementById("section-links");
const views = document.getElementById("views");
const chat = document.getElementById("view-chat");
const loaded = new Map(); // section id -> its root element
let sections = [];
let who = null;

function sectionOf(hash) {
  const id = hash.replace(/^#\/?/, "");
  return sections.some((s) => s.id === id) ? id : "chat";
}

function say(root, text, kind = "") {
  const line = root.querySelector(":scope > .control-status");
  line.textContent = text;
  line.className = `control-status ${kind}`.trim();
}

function rootFor(section) {
  let root = loaded.get(section.id);
  if (root) return root;
  root = document.createElement("main");
  root.id = `view-${section.id}`;
  root.className = "view control";
  root.setAttribute("aria-labelledby", `title-${section.id}`);
  const title = document.createElement("h1");
  title.id = `title-${section.id}`;
  title.tabIndex = -1;
  title.textContent = section.label;
  const status = document.createElement("p");
  status.className = "control-status";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  const body = document.createElement("div");
  body.className = "control-body";
  root.append(title, status, body);
  views.append(root);
  loaded.set(section.id, root);
  return root;
}

async function open(id) {
  for (const a of links.querySelectorAll("a")) {
    if (a.dataset.section !== id) {
      a.removeAttribute("aria-current");
      continue;
    }
    a.setAttribute("aria-current", "page");
    // On a narrow screen the bar scrolls: keep the open section's label in sight.
    a.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
  chat.hidden = id !== "chat";
  for (const [sid, root] of loaded) root.hidden = sid !== id;
  if (id === "chat") return;
  const section = sections.find((s) => s.id === id);
  const root = rootFor(section);
  root.hidden = false;
  root.querySelector("h1").focus();
  const ctx = {
    call,
    who,
    readOnly: who?.scope === "read",
    say: (text, kind) => say(root, text, kind),
  };
  try {
    const view = await import(`./${id}.js`);
    await view.show(root.querySelector(".control-body"), ctx);
  } catch (err) {
    say(root, err.message ?? String(err), "error");
  }
}

async function start() {
  try {
    const answer = await call("GET", "/api/control");
    sections = answer.sections;
    who = answer.who;
  } catch {
    sections = [{ id: "chat", label: "Chat" }];
  }
  links.replaceChildren(
    ...sections.map((s) => {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = `#/${s.id}`;
      a.dataset.section = s.id;
      a.textContent = s.label;
      li.append(a);
      return li;
    }),
  );
  window.addEventListener("hashchange", () => open(sectionOf(location.hash)));
  await open(sectionOf(location.hash));
}

start();
