// The Settings section's form, generated from the configuration's JSON Schema (the pydantic
// models config.toml is read with): a fieldset a section; booleans as checkboxes, enums as
// selects, numbers with their bounds, lists as one item a line, tables read-only. Each
// field says where its value came from. `changed()` gives only what the person changed.
import { el } from "./ui.js";

let fieldIds = 0;

/** A labelled field whose hint (the value's source) describes the control: the name
 * alone labels it, a screen reader reads the source after it. */
function settingField(label, control, hint) {
  const id = `setting-${++fieldIds}`;
  control.id = id;
  control.setAttribute("aria-describedby", `${id}-hint`);
  return el("div", { className: "field" },
    el("label", { className: "label-text", for: id }, label),
    control,
    el("small", { className: "hint", id: `${id}-hint` }, hint));
}

/** The schema of a property, its `$ref` followed and a `null` alternative dropped. */
export function resolve(prop, defs) {
  let p = prop;
  if (p.$ref) p = defs[p.$ref.split("/").pop()];
  const options = (p.anyOf ?? [p]).filter((o) => o.type !== "null");
  const nullable = (p.anyOf ?? []).some((o) => o.type === "null");
  const one = options.length === 1 ? options[0] : {};
  return { ...one, nullable, description: p.description ?? prop.description };
}

function sourceText(item) {
  if (item.source === "environment") return `from the environment (${item.variable})`;
  if (item.source === "file") return "from config.toml";
  return "default";
}

function numberControl(schema, value) {
  const integer = schema.type === "integer";
  const attrs = { type: "number", step: integer ? "1" : "any", value: String(value ?? "") };
  if (schema.minimum !== undefined) attrs.min = String(schema.minimum);
  if (schema.exclusiveMinimum !== undefined) {
    attrs.min = String(integer ? schema.exclusiveMinimum + 1 : schema.exclusiveMinimum);
  }
  if (schema.maximum !== undefined) attrs.max = String(schema.maximum);
  return el("input", attrs);
}

/** A control for one value, and how to read it back as JSON. */
function control(schema, item) {
  const value = item.value;
  if (item.kind === "table") {
    const pre = el("pre", { tabIndex: 0 }, JSON.stringify(value, null, 2));
    return [pre, () => value];
  }
  if (schema.type === "boolean") {
    const box = el("input", { type: "checkbox", checked: Boolean(value) });
    return [box, () => box.checked];
  }
  if (schema.enum) {
    const select = el("select", {}, schema.enum.map((v) => el("option", { value: v, selected: v === value }, v)));
    return [select, () => select.value];
  }
  if (item.kind === "list") {
    const area = el("textarea", { rows: 3, value: (value ?? []).join("\n") });
    return [area, () => area.value.split("\n").map((s) => s.trim()).filter(Boolean)];
  }
  if (schema.type === "integer" || schema.type === "number") {
    const input = numberControl(schema, value);
    return [input, () => (input.value.trim() === "" ? null : Number(input.value))];
  }
  const input = el("input", { type: "text", value: value ?? "" });
  return [input, () => (input.value === "" && schema.nullable ? null : input.value)];
}

function describe(item, name) {
  const parts = [sourceText(item)];
  if (item.masked) parts.push("secret: masked");
  if (item.kind === "table") parts.push(`edit [${name}] in config.toml`);
  else if (!item.editable) parts.push("change the variable, not the file");
  return parts.join(" · ");
}

/** The form's fieldsets for `values` (GET /api/settings) under `schema`; `changed()` is
 * `{ "section.key": value }` of what differs from what was shown. */
export function settingsForm(schema, values) {
  const defs = schema.$defs ?? {};
  const readers = [];
  const bySection = new Map();
  for (const [key, item] of Object.entries(values)) {
    const [section, name = ""] = key.split(".");
    if (!bySection.has(section)) bySection.set(section, []);
    bySection.get(section).push([key, name, item]);
  }
  const fieldsets = [...bySection].map(([section, items]) => {
    const sectionSchema = resolve(schema.properties[section], defs);
    const rows = items.map(([key, name, item]) => {
      const prop = name ? sectionSchema.properties?.[name] ?? {} : schema.properties[section];
      const fieldSchema = resolve(prop, defs);
      const [node, read] = control(fieldSchema, item);
      node.dataset.key = key;
      node.dataset.source = item.source;
      if (!item.editable && item.kind !== "table") node.disabled = true;
      if (item.editable) readers.push([key, read, item.value]);
      return settingField(name || section, node, describe(item, section));
    });
    return el(
      "fieldset",
      { className: "settings-section", dataset: { section } },
      el("legend", {}, section),
      sectionSchema.description ? el("p", { className: "hint" }, sectionSchema.description) : null,
      rows,
    );
  });
  const changed = () => {
    const out = {};
    for (const [key, read, before] of readers) {
      const now = read();
      if (JSON.stringify(now) !== JSON.stringify(before)) out[key] = now;
    }
    return out;
  };
  return { fieldsets, changed };
}
