// Small DOM helpers the dashboard's sections share: elements, tables, forms, buttons.
// Text is always set as text (never as HTML): what the agent, a log or a file says is
// shown, never run.

/** An element: `el("td", { className: "num" }, "12")`; attributes starting with `on` are
 * listeners, `dataset` and `aria` objects set data-* and aria-* attributes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else if (key === "aria") {
      for (const [name, v] of Object.entries(value)) node.setAttribute(`aria-${name}`, v);
    } else if (key in node && typeof value !== "string") {
      node[key] = value;
    } else if (key === "className" || key === "textContent" || key === "value") {
      node[key] = value;
    } else {
      node.setAttribute(key, value === true ? "" : value);
    }
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** A button that runs `action`, disabled while it runs. */
export function button(text, action, attrs = {}) {
  const b = el("button", { type: "button", ...attrs }, text);
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      await action();
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

/** A table: `columns` are [header, (row) => cell text or node]; `caption` names it. */
export function table(caption, columns, rows, empty = "Nothing yet.") {
  if (!rows.length) return el("p", { className: "empty" }, empty);
  return el(
    "table",
    { className: "grid" },
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, columns.map(([head]) => el("th", { scope: "col" }, head)))),
    el(
      "tbody",
      {},
      rows.map((row) =>
        el("tr", {}, columns.map(([, cell]) => {
          const value = cell(row);
          return el("td", {}, value instanceof Node ? value : String(value ?? ""));
        })),
      ),
    ),
  );
}

/** A labelled field: the label wraps the control, so clicking it focuses the control. */
export function field(label, control, hint = "") {
  return el("label", { className: "field" }, el("span", { className: "label-text" }, label), control,
    hint ? el("small", { className: "hint" }, hint) : null);
}

/** Run `action`, report its error on the section's status line instead of throwing. */
export async function guarded(ctx, action) {
  try {
    return await action();
  } catch (err) {
    ctx.say(err.message ?? String(err), "error");
    return undefined;
  }
}

/** Run `action` (guarded); when it worked, `redraw()` and only then say `done` (text, or
 * a function of the action's result): the status line never reports a change the lists
 * do not show yet. Returns the action's result (undefined when it failed). */
export async function changed(ctx, action, redraw, done) {
  const result = await guarded(ctx, action);
  if (!result) return result;
  await redraw(result);
  ctx.say(typeof done === "function" ? done(result) : done);
  return result;
}
