// The session list in the sidebar: each session as a button (title, personality, size,
// last change, and a search hit's snippet).

function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
}

/** The session's title, else its name as the page made it ("first-words-3fa2"). */
export function displayTitle(s) {
  if (s.title) return s.title;
  const made = /^([a-z0-9]+(?:-[a-z0-9]+)*)-[0-9a-f]{4}$/.exec(s.name);
  return made ? made[1].replaceAll("-", " ") : s.name;
}

function span(className, text) {
  const node = document.createElement("span");
  node.className = className;
  node.textContent = text;
  return node;
}

function sessionButton(s, current, onOpen) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "session";
  button.dataset.name = s.name;
  if (s.name === current) button.setAttribute("aria-current", "true");
  button.title = s.name;
  const meta = [s.personality, `${s.message_count ?? 0} messages`, when(s.updated_at)]
    .filter(Boolean)
    .join(" · ");
  button.append(span("session-title", displayTitle(s)), span("session-meta", meta));
  if (s.snippet) button.append(span("session-snippet", s.snippet));
  button.addEventListener("click", () => onOpen(s.name));
  return button;
}

/** The list's items, newest first; `query` words the empty list. */
export function sessionItems(sessions, { current, query, onOpen }) {
  const items = [...sessions]
    .sort((a, b) => (b.updated_at ?? 0) - (a.updated_at ?? 0))
    .map((s) => {
      const li = document.createElement("li");
      li.append(sessionButton(s, current, onOpen));
      return li;
    });
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = query ? `No session matches “${query}”.` : "No sessions yet.";
    items.push(li);
  }
  return items;
}
