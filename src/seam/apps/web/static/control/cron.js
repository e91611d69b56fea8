// The dashboard's section "cron" (routes in apps/web/control/cron.py): the jobs with their
// next run, last run, delivery and state, each with its actions (runs, pause or resume,
// run now, edit, delete); the add/edit form with its live preview (cron-form.js); the
// selected job's runs (cron-runs.js). Everything is read fresh from the server on each
// visit and after each action, so what `seam cron` changed shows on the next look.
import { button, changed, el, guarded, table } from "./ui.js";
import { jobForm } from "./cron-form.js";
import { jobPath, showRuns, stopFollowing } from "./cron-runs.js";

let view = null; // the section as last shown: { root, ctx, list, runs, form, jobs }

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  stopFollowing();
  const list = el("section", { className: "cron-jobs", aria: { label: "Cron jobs" } });
  const runs = el("section", { className: "cron-runs", aria: { label: "Runs" } });
  const form = el("section", { className: "cron-form", aria: { label: "Add or edit a job" } });
  root.replaceChildren(list, runs, form);
  view = { root, ctx, list, runs, form, jobs: [] };
  await refresh();
  if (!ctx.readOnly) await openForm(null);
}

/** Read the jobs again and redraw the table (after an action, or "Refresh"). */
export async function refresh() {
  const answer = await guarded(view.ctx, () => view.ctx.call("GET", "/api/cron/jobs"));
  if (!answer) return;
  view.jobs = answer.jobs;
  const refreshButton = button("Refresh", refresh, { className: "cron-refresh" });
  view.list.replaceChildren(
    el("div", { className: "row" }, el("h2", {}, "Jobs"), refreshButton),
    table("Cron jobs, oldest first", columns(), view.jobs,
      "No cron jobs yet: add one below (or: seam cron add --every 2h \"...\")."),
  );
}

function columns() {
  return [
    ["Job", (job) => el("code", {}, job.id)],
    ["Prompt", (job) => el("span", { className: "cron-prompt", title: job.prompt }, clip(job.prompt, 90))],
    ["Schedule", (job) => `${job.schedule} (${job.tz})`],
    ["Next run", (job) => (job.paused ? "paused" : job.next_run ?? "none")],
    ["Last run", lastRun],
    ["Delivers to", target],
    ["State", stateOf],
    ["Actions", actions],
  ];
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

// A `file:` target is stored as its full path; under the home's deliveries/ folder, as
// it was given (file:daily.md) reads better, and the full path stays in the tooltip.
function target(job) {
  const short = job.deliver.replace(/^file:.*\/deliveries\//, "file:");
  return el("span", { className: "cron-target", title: job.deliver }, short);
}

function lastRun(job) {
  const last = job.last_run;
  if (!last) return "never";
  const delivery = last.delivery === "none" || last.delivery === "pending" ? "" : `, ${last.delivery}`;
  return `${last.outcome}${delivery} · ${last.when}`;
}

function stateOf(job) {
  const failures = job.consecutive_failures
    ? el("span", { className: "danger" }, ` · ${job.consecutive_failures} failures`)
    : null;
  return el("span", { className: `cron-state cron-${job.state}` }, job.state, failures);
}

function actions(job) {
  const box = el("span", { className: "cron-actions" });
  const act = (text, what, run) =>
    button(text, run, { aria: { label: `${what} ${job.id}` } });
  const common = [act("Runs", "Runs of", () => select(job))];
  if (view.ctx.readOnly) {
    box.append(...common);
    return box;
  }
  box.append(
    ...common,
    job.paused ? act("Resume", "Resume", () => change(job, "/resume", "resumed"))
      : act("Pause", "Pause", () => change(job, "/pause", "paused")),
    act("Run now", "Run now", () => runNow(job)),
    act("Edit", "Edit", () => openForm(job)),
    act("Delete", "Delete", () => confirmDelete(box, job)),
  );
  return box;
}

async function select(job) {
  await showRuns(view, job);
}

async function change(job, tail, done) {
  await changed(view.ctx, () => view.ctx.call("POST", jobPath(job.id, tail)), refresh,
    `Job ${job.id} ${done}.`);
}

async function runNow(job) {
  const run = await guarded(view.ctx, () => view.ctx.call("POST", jobPath(job.id, "/run")));
  if (!run) return;
  view.ctx.say(`Job ${job.id} is running now; its run is listed below.`);
  const settled = async (done) => {
    await refresh();
    if (done) view.ctx.say(`Job ${job.id} ran: ${done.outcome_text}, delivery ${done.delivery}.`);
  };
  await showRuns(view, job, { slot: run.slot_key, settled });
}

function confirmDelete(box, job) {
  const keep = button("Keep", () => refresh());
  box.replaceChildren(
    el("span", { className: "danger" }, "Delete this job and its runs? "),
    button("Yes, delete", () => remove(job), { className: "danger", aria: { label: `Yes, delete ${job.id}` } }),
    keep,
  );
  keep.focus();
}

async function remove(job) {
  await changed(view.ctx, () => view.ctx.call("DELETE", jobPath(job.id)), () => {
    view.runs.replaceChildren();
    return refresh();
  }, `Job ${job.id} deleted.`);
}

async function openForm(job) {
  await jobForm(view, job, async () => {
    await refresh();
    await openForm(null);
  });
}
