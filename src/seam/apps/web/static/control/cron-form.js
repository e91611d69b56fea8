// The Cron section's form: add a job (POST /api/cron/jobs, the fields of `seam cron add`)
// or edit one (PATCH, only what changed). The schedule is one field read by its form
// (30m, 0 9 * * 1-5, 2026-12-24T18:00); its next five runs are previewed as you type
// (POST /api/cron/preview, debounced), with the server's one-line reason when it is wrong.
import { button, changed, el, field } from "./ui.js";
import { jobPath } from "./cron-runs.js";

const PREVIEW_MS = 300;
const HERE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** Draw the form in `view.form`: empty to add a job, or filled with `job` to edit it;
 * `done` runs after a successful save. */
export async function jobForm(view, job, done) {
  const f = controls(job);
  const preview = el("div", { className: "cron-preview", role: "status", aria: { live: "polite" } });
  const watch = debounced(() => showPreview(view.ctx, f, preview), PREVIEW_MS);
  f.schedule.addEventListener("input", watch);
  f.tz.addEventListener("input", watch);
  const form = el("form", { className: "cron-job-form", aria: { labelledby: "cron-form-title" } },
    el("h2", { id: "cron-form-title" }, job ? `Edit job ${job.id}` : "Add a job"),
    field("Prompt", f.prompt, "What to ask the agent at each run."),
    field("Schedule", f.schedule, "An interval (30m, every 2h, 1d), a cron expression (0 9 * * 1-5) or a time (2026-12-24T18:00)."),
    preview,
    field("Time zone", f.tz, "Cron times and a time without a zone are read in it."),
    field("Deliver to", f.deliver, "owner, telegram:<chat>, file:<path under deliveries/>, a webhook URL, or none."),
    field("Personality", f.personality),
    field("After downtime", f.missed),
    el("label", { className: "check" }, f.continueSession, " Run in the job's own session (not a fresh one each run)"),
    el("label", { className: "check" }, f.urgent, " Urgent: deliver even in quiet hours"),
    el("div", { className: "row" },
      el("button", { type: "submit", className: "primary" }, job ? "Save changes" : "Add job"),
      job ? button("Cancel", () => done()) : null),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await save(view.ctx, job, f, done);
  });
  view.form.replaceChildren(form);
  await fillPersonalities(view.ctx, f.personality, job?.personality ?? "");
  if (job) {
    await showPreview(view.ctx, f, preview);
    f.prompt.focus();
  }
}

function controls(job) {
  const check = (on) => el("input", { type: "checkbox", checked: Boolean(on) });
  const missed = el("select", {},
    el("option", { value: "skip" }, "skip what was missed"),
    el("option", { value: "catch_up_once" }, "catch up once"));
  missed.value = job?.missed ?? "skip";
  return {
    prompt: el("textarea", { required: true, rows: 3, maxLength: 20000, value: job?.prompt ?? "" }),
    schedule: el("input", { required: true, maxLength: 200, autocomplete: "off", value: job?.schedule ?? "", placeholder: "0 9 * * 1-5" }),
    tz: el("input", { required: true, maxLength: 100, value: job?.tz ?? HERE }),
    deliver: el("input", { required: true, maxLength: 2000, value: job?.deliver ?? "owner" }),
    personality: el("select", {}, el("option", { value: "" }, "(the default)")),
    missed,
    continueSession: check(job?.continue_session),
    urgent: check(job?.urgent),
  };
}

function values(f) {
  return {
    prompt: f.prompt.value.trim(),
    schedule: f.schedule.value.trim(),
    tz: f.tz.value.trim() || "UTC",
    deliver: f.deliver.value.trim(),
    personality: f.personality.value || null,
    missed: f.missed.value,
    continue_session: f.continueSession.checked,
    urgent: f.urgent.checked,
  };
}

/** The body to send: every field to add; only what changed to edit. */
function bodyFor(job, wanted) {
  if (!job) return wanted;
  const body = {};
  for (const [key, value] of Object.entries(wanted)) {
    if (value !== (job[key] ?? null)) body[key] = value;
  }
  return body;
}

async function save(ctx, job, f, done) {
  const body = bodyFor(job, values(f));
  if (job && !Object.keys(body).length) {
    ctx.say("Nothing changed.");
    return;
  }
  await changed(ctx, () =>
    job ? ctx.call("PATCH", jobPath(job.id), body) : ctx.call("POST", "/api/cron/jobs", body),
  done, (saved) => (job ? `Job ${saved.id} saved.` : `Job ${saved.id} added: next run ${saved.next_run ?? "none"}.`));
}

async function fillPersonalities(ctx, select, current) {
  let known = [];
  try {
    known = (await ctx.call("GET", "/api/personalities")).personalities.map((p) => p.id);
  } catch {
    known = []; // the default is still offered; the server checks a name when saving
  }
  if (current && !known.includes(current)) known.push(current);
  select.append(...known.map((id) => el("option", { value: id }, id)));
  select.value = current;
}

let asked = 0; // the latest preview asked for: an older answer arriving late is dropped

async function showPreview(ctx, f, box) {
  const schedule = f.schedule.value.trim();
  const mine = ++asked;
  if (!schedule) {
    box.replaceChildren();
    return;
  }
  let answer;
  try {
    answer = await ctx.call("POST", "/api/cron/preview", { schedule, tz: f.tz.value.trim() || "UTC" });
  } catch (err) {
    if (mine === asked) box.replaceChildren(el("p", { className: "danger" }, err.message ?? String(err)));
    return;
  }
  if (mine !== asked) return;
  const runs = answer.runs.map((r) => el("li", {}, r.text));
  box.replaceChildren(
    el("p", {}, answer.runs.length ? `Next runs (${answer.kind}):` : "It would not run again."),
    el("ol", { className: "cron-next" }, runs),
  );
}

function debounced(action, ms) {
  let pending = null;
  return () => {
    if (pending !== null) clearTimeout(pending);
    pending = setTimeout(() => {
      pending = null;
      action();
    }, ms);
  };
}
