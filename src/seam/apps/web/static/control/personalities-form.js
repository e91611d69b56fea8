// A personality's settings as a form generated from the JSON Schema the server sends (the
// pydantic model of config.toml, apps/web/control/personality_settings.py): a text box for
// a string, a choice for an enum or a true/false, a comma-separated box for a list, a
// fieldset for a table. Only the fields a person changed are sent; an emptied field is sent
// as null, which removes the key from config.toml so its default applies. The server
// checks every value again (a bad one comes back as one line naming the field).
import { el, field } from "./ui.js";

/** The schema of one property with `X | None` and `$ref` unwrapped. */
function resolve(prop, schema) {
  let spec = prop;
  if (spec.anyOf) spec = spec.anyOf.find((s) => s.type !== "null") ?? spec.anyOf[0];
  if (spec.$ref) spec = schema.$defs[spec.$ref.split("/").pop()];
  return { ...spec, title: prop.title ?? spec.title, description: prop.description ?? spec.description };
}

function shown(value) {
  if (value === undefined || value === null) return "";
  return Array.isArray(value) ? value.join(", ") : String(value);
}

/** A value in effect as a hint says it: lists in brackets, so "." reads as a folder. */
function inEffect(value) {
  if (value === undefined || value === null || value === "") return "(not set)";
  return Array.isArray(value) ? `[${value.map((v) => JSON.stringify(v)).join(", ")}]` : String(value);
}

/** A control for `spec`, holding `value`; its parse gives what is sent (null: remove). */
function control(spec, value) {
  if (spec.enum || spec.type === "boolean") {
    const choices = spec.enum ?? [true, false];
    const select = el("select", {}, el("option", { value: "" }, "not set"),
      choices.map((c) => el("option", { value: String(c) }, String(c))));
    select.value = value === undefined || value === null ? "" : String(value);
    const parse = () => (select.value === "" ? null : spec.enum ? select.value : select.value === "true");
    return { node: select, parse };
  }
  const input = el("input", { type: "text", value: shown(value), autocomplete: "off" });
  if (spec.type === "array") {
    const parse = () => {
      const items = input.value.split(",").map((s) => s.trim()).filter((s) => s !== "");
      return input.value.trim() === "" ? null : items;
    };
    return { node: input, parse };
  }
  return { node: input, parse: () => (input.value === "" ? null : input.value) };
}

function hintFor(key, spec, effective, editable) {
  const parts = [spec.description ?? ""];
  if (spec.type === "array") parts.push("Comma-separated.");
  if (effective !== undefined && spec.type !== "object") parts.push(`In effect: ${inEffect(effective)}.`);
  parts.push(editable ? `Key: ${key}.` : `Key: ${key}; only the owner sets this.`);
  return parts.filter(Boolean).join(" ");
}

/** The form: `answer` is GET /api/personalities/{pid}/settings; `submit(values)` saves. */
export function settingsForm(answer, readOnly, submit) {
  const { schema, values, effective, editable } = answer;
  const changed = new Map(); // "key" or "table.key" -> parse
  const fieldFor = (path, spec, value, inEffect, allowed) => {
    const { node, parse } = control(spec, value);
    node.disabled = readOnly || !allowed;
    node.dataset.key = path;
    const mark = () => changed.set(path, parse);
    node.addEventListener("input", mark);
    node.addEventListener("change", mark);
    return field(spec.title ?? path, node, hintFor(path, spec, inEffect, allowed));
  };
  const fields = Object.entries(schema.properties).map(([key, prop]) => {
    const spec = resolve(prop, schema);
    const allowed = editable.includes(key);
    if (spec.type !== "object") return fieldFor(key, spec, values[key], effective[key], allowed);
    return el("fieldset", { className: "settings-table" }, el("legend", {}, `${spec.title} [${key}]`),
      Object.entries(spec.properties).map(([sub, subProp]) => fieldFor(`${key}.${sub}`,
        resolve(subProp, schema), values[key]?.[sub], effective[key]?.[sub], allowed)));
  });
  const form = el("form", { className: "settings-form", aria: { label: `Settings of ${answer.id}` } },
    fields, el("div", { className: "row" }, el("button", { type: "submit", disabled: readOnly }, "Save settings")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const edit = {};
    for (const [path, parse] of changed) {
      const [key, sub] = path.split(".");
      if (sub === undefined) edit[key] = parse();
      else edit[key] = { ...(edit[key] ?? {}), [sub]: parse() };
    }
    submit(edit);
  });
  return form;
}
