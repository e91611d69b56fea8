// The native API of `seam serve` as the page uses it. The session cookie (set by the login
// URL) authenticates every request; errors carry the server's {"error": {"message"}}.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function call(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = data?.error?.message ?? `${method} ${path}: HTTP ${response.status}`;
    throw new ApiError(response.status, message);
  }
  return data;
}

const enc = encodeURIComponent;

export const api = {
  sessions: (q) => call("GET", q ? `/api/sessions?q=${enc(q)}` : "/api/sessions"),
  createSession: (body) => call("POST", "/api/sessions", body),
  session: (name) => call("GET", `/api/sessions/${enc(name)}`),
  send: (name, body) => call("POST", `/api/sessions/${enc(name)}/messages`, body),
  approve: (name, callId, decision) =>
    call("POST", `/api/sessions/${enc(name)}/approvals/${enc(callId)}`, { decision }),
  cancel: (name) => call("POST", `/api/sessions/${enc(name)}/cancel`),
  personalities: () => call("GET", "/api/personalities"),
  eventsUrl: (name, after) => `/api/sessions/${enc(name)}/events?after=${after}`,
};

// Every event the server streams (`event:` lines); EventSource needs each by name. A turn's
// error comes as `turn_error` (its JSON still says "type": "error"): an event named
// `error` would reach EventSource's own error handler, as if the connection were lost.
export const EVENT_TYPES = [
  "run_start", "text_delta", "thinking_delta", "tool_start", "tool_progress", "tool_end",
  "tool_approval_required", "tool_approval_response", "usage", "context_compacted",
  "context_warning", "halt", "notice", "turn_error", "done",
];

/**
 * Follow a session's events from `after`: each event is handed to `onEvent` once, in order,
 * even across reconnects. The browser's EventSource resumes with Last-Event-ID by itself;
 * when it gives up (the server was gone too long), a new one starts after the last id seen.
 */
export function follow(name, after, onEvent, onState) {
  let last = after;
  let source = null;
  let stopped = false;
  let retry = null;

  const open = () => {
    source = new EventSource(api.eventsUrl(name, last));
    source.onopen = () => onState("open");
    source.onerror = () => {
      if (stopped) return;
      onState("reconnecting");
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        retry = setTimeout(open, 1500);
      }
    };
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (message) => {
        const seq = Number(message.lastEventId);
        if (!Number.isFinite(seq) || seq <= last) return; // seen already: render once
        last = seq;
        onEvent(JSON.parse(message.data));
      });
    }
    // A model's retry is live news, never stored nor replayed: it has no sequence number.
    source.addEventListener("retry", (message) => onEvent(JSON.parse(message.data)));
  };
  open();
  return {
    get last() {
      return last;
    },
    close() {
      stopped = true;
      clearTimeout(retry);
      source?.close();
    },
  };
}
