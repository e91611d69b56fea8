// The Cron section's runs of one job (GET /api/cron/jobs/{id}/runs): due time, outcome,
// delivery, note and the delivered message. After "Run now" the list is read again every
// second until the scheduler has settled that run and its delivery is sent or failed (the
// turn runs in the server's background; its message shows as soon as it has answered).
import { el, guarded, table } from "./ui.js";

const FOLLOW_MS = 1000;
const FOLLOW_TRIES = 120;
const ON_ITS_WAY = ["pending", "queued"];
let timer = null;

export const jobPath = (id, tail = "") => `/api/cron/jobs/${encodeURIComponent(id)}${tail}`;

/** Stop reading a run again (the section was shown anew). */
export function stopFollowing() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

/** Show `job`'s runs in `view.runs`. `following` ({ slot, settled }): read them again
 * every second until the run of that slot has settled, then call `settled(run)` (the
 * jobs table shows the new last run). */
export async function showRuns(view, job, following = null, tries = 0) {
  stopFollowing();
  const answer = await guarded(view.ctx, () => view.ctx.call("GET", jobPath(job.id, "/runs")));
  if (!answer) return;
  view.runs.replaceChildren(
    el("h2", { id: "cron-runs-title" }, `Runs of ${job.id}`),
    el("p", { className: "hint" }, job.prompt),
    table(`Runs of ${job.id}, newest first`, COLUMNS, answer.runs, "This job has not run yet."),
  );
  if (following === null) return;
  const run = answer.runs.find((r) => r.slot_key === following.slot);
  // Settled by the scheduler, and its delivery no longer on its way (held waits for the
  // end of quiet hours: not worth watching).
  const done = run && run.outcome_text !== "running" && !ON_ITS_WAY.includes(run.delivery);
  if (done || tries >= FOLLOW_TRIES) {
    await following.settled?.(run);
    return;
  }
  timer = setTimeout(() => {
    timer = null;
    if (view.root.isConnected) showRuns(view, job, following, tries + 1);
  }, FOLLOW_MS);
}

const COLUMNS = [
  ["Due", (run) => run.due],
  ["Outcome", (run) => run.outcome_text],
  ["Delivery", delivery],
  ["Note", (run) => run.note ?? ""],
  ["Message", message],
];

function delivery(run) {
  if (!run.delivery_error) return run.delivery;
  return el("span", { className: "danger" }, `failed: ${run.delivery_error}`);
}

function message(run) {
  if (run.message !== null) return el("pre", { className: "cron-message" }, run.message);
  if (run.error) return el("pre", { className: "cron-message danger" }, run.error);
  return "";
}
