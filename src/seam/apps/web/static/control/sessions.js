// The dashboard's section "sessions" (its view; routes in apps/web/control/sessions.py).
import { el } from "./ui.js";

/** Show the section in `root` (called on every visit; `ctx` has call, who, readOnly, say). */
export async function show(root, ctx) {
  root.replaceChildren(el("p", { className: "empty" }, "This section is not built yet."));
}
