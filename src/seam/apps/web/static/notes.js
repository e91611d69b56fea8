// What the conversation says when a turn fails or is tried again: an error block with
// the provider's reason, and a retry line ("retrying in 4 s, 2 of 5: HTTP 503: …") whose
// seconds count down until the attempt starts.

function el(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * A failure as stored ("fatal: openai: fatal (HTTP 400): …") or streamed ("openai: fatal
 * (HTTP 400): …"): the same text without the stored kind in front.
 */
export function failureText(message) {
  return String(message ?? "").replace(/^[a-z_]+: (?=[^:\s]+: )/, "");
}

/**
 * A turn's error in the conversation: the heading, then the error as given (for a model
 * error, the provider's own words: "openai: fatal (HTTP 400): …"). Not every failure is
 * the model's (an unknown personality, a crash), so the heading names the turn. `live`:
 * it just happened, so a screen reader announces it (not each time history is redrawn).
 */
export function errorBlock(message, live = false) {
  const box = el("div", "turn-error");
  if (live) box.setAttribute("role", "alert");
  box.append(el("strong", "", "This turn failed: "), el("span", "reason", failureText(message)));
  return box;
}

function seconds(left) {
  return left < 0.95 ? left.toFixed(1) : String(Math.round(left));
}

/**
 * "retrying in 4 s, 2 of 5: reason", counting down to `until` (epoch ms); then
 * "retrying now, 2 of 5: reason". The countdown stops once the line leaves the page.
 */
export function retryLine({ attempt, attempts, reason, until }) {
  const line = el("p", "retrying");
  line.setAttribute("role", "status");
  const of = `${attempt} of ${attempts}`;
  const tick = () => {
    const left = (until - Date.now()) / 1000;
    const when = left > 0 ? `retrying in ${seconds(left)} s` : "retrying now";
    line.textContent = `${when}, ${of}${reason ? `: ${reason}` : ""}`;
    return left > 0;
  };
  tick();
  const timer = setInterval(() => {
    if (line.isConnected) line.dataset.shown = "true";
    else if (line.dataset.shown) return clearInterval(timer); // taken off the page
    if (!tick()) clearInterval(timer);
  }, 250);
  return line;
}

/** A provider's retry, streamed as it happens (event `retry`). */
export function providerRetry(event) {
  const line = retryLine({
    attempt: event.attempt,
    attempts: event.attempts,
    reason: event.reason,
    until: Date.now() + event.delay * 1000,
  });
  const note = el("article", "msg assistant retry-note");
  note.setAttribute("aria-label", "Seam");
  note.dataset.submission = event.submission_id ?? "";
  note.append(line);
  return note;
}

/**
 * A submission that failed and waits to run again (its input is in the transcript
 * already): its error, and when the next attempt starts.
 */
export function rerunNote(sub) {
  const note = el("article", "msg assistant rerun-note");
  note.setAttribute("aria-label", "Seam");
  note.dataset.submission = sub.id;
  if (sub.error) note.append(errorBlock(sub.error));
  note.append(retryLine({
    attempt: sub.attempts + 1,
    attempts: sub.max_attempts,
    reason: "",
    until: (sub.not_before ?? 0) * 1000,
  }));
  return note;
}
