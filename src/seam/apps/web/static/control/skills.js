// The dashboard's Skills section: every skill found, offered or why not, trusted or not;
// a working-directory skill is trusted from here (as `seam skills trust` does), after
// reading its SKILL.md, which is shown as text (a skill's words are never run as HTML).
// Routes: apps/web/control/skills.py.
import { button, el, guarded, table } from "./ui.js";

const enc = encodeURIComponent;

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  await render(root, ctx, null);
}

/** The table, and below it the skill named `viewing` (kept open after a Trust). */
async function render(root, ctx, viewing) {
  const found = await guarded(ctx, () => ctx.call("GET", "/api/skills"));
  if (!found) return;
  const detail = el("section", { className: "skill-detail", aria: { live: "polite" } });
  const state = { viewing };
  const again = () => render(root, ctx, state.viewing);
  const open = (skill) => {
    state.viewing = skill.name;
    return view(detail, ctx, skill, again);
  };
  const where = found.looked_in.map((d) => d.path).join(", ");
  root.replaceChildren(
    table(
      "Installed skills",
      [
        ["Name", (s) => s.name],
        ["Description", (s) => s.description],
        ["Where", (s) => el("span", {}, `${s.origin}: `, el("code", {}, s.folder))],
        ["Offered", (s) => (s.offered ? "yes" : `no: ${s.problem}`)],
        ["Trusted", (s) => trustCell(s, ctx, again)],
        ["SKILL.md", (s) => button("View", () => open(s), { "aria-label": `View ${s.name}` })],
      ],
      found.skills,
      `No skills found (looked in ${where}).`,
    ),
    detail,
  );
  const shown = found.skills.find((s) => s.name === viewing);
  if (shown) await open(shown);
}

/** "yes", "not needed", or a Trust button for a working-directory skill not trusted yet. */
function trustCell(skill, ctx, again) {
  if (!skill.needs_trust) return "yes (your own folder)";
  if (skill.trusted) return "yes";
  if (ctx.readOnly) return "no";
  return button("Trust", () => trust(skill, ctx, again), { "aria-label": `Trust ${skill.name}` });
}

async function trust(skill, ctx, again) {
  const done = await guarded(ctx, () =>
    ctx.call("POST", `/api/skills/${enc(skill.name)}/trust`));
  if (!done) return;
  await again();
  ctx.say(done.trusted.join("; "));
}

/** The skill's text as `seam skills show` prints it (its files listed at the end). */
async function view(detail, ctx, skill, again) {
  const shown = await guarded(ctx, () => ctx.call("GET", `/api/skills/${enc(skill.name)}`));
  if (!shown) return;
  const heading = el("h2", { tabIndex: -1 }, `SKILL.md of ${shown.name}`);
  const parts = [
    heading,
    el("p", {}, `${shown.origin}: `, el("code", {}, shown.folder)),
    shown.offered ? null : el("p", { className: "danger" }, `Not offered: ${shown.problem}`),
    el("pre", { className: "skill-text" }, shown.text),
    shown.needs_trust && !shown.trusted && !ctx.readOnly
      ? button("Trust this skill", () => trust(shown, ctx, again))
      : null,
  ];
  detail.replaceChildren(...parts.filter((part) => part !== null));
  heading.focus();
}
