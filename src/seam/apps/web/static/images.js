// A person's images in the chat: the composer's attachments (picked with the Image button
// or pasted into the message box, each a chip with a preview and a remove button) and the
// stored images a conversation's messages show (served by the session's image route).
// The server checks every image again (type by its bytes, size, count): this only spares
// a person a round trip for an obvious mistake.

import { el } from "./view.js";

const TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_IMAGES = 8;

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** The images waiting to go with the next message. `onProblem(text)` says a refusal. */
export class Attachments {
  constructor(box, input, prompt, onProblem) {
    this.box = box;
    this.items = [];
    this.onProblem = onProblem;
    input.addEventListener("change", async () => {
      for (const file of input.files) await this.add(file);
      input.value = "";
    });
    prompt.addEventListener("paste", async (e) => {
      const files = [...(e.clipboardData?.files ?? [])].filter((f) => f.type.startsWith("image/"));
      if (!files.length) return;
      e.preventDefault();
      for (const file of files) await this.add(file);
    });
  }

  get count() {
    return this.items.length;
  }

  async add(file) {
    const name = file.name || "pasted image";
    if (!TYPES.includes(file.type)) return this.onProblem(`${name}: not a PNG, JPEG, GIF or WebP image`);
    if (file.size > MAX_BYTES) return this.onProblem(`${name}: over the 5 MiB limit for an image`);
    if (this.items.length >= MAX_IMAGES) return this.onProblem(`at most ${MAX_IMAGES} images in one message`);
    const url = await readAsDataUrl(file);
    this.items.push({ name, mime_type: file.type, data: url.slice(url.indexOf(",") + 1), url });
    this.render();
  }

  /** The images for the request body ({mime_type, data}), the composer emptied. */
  take() {
    const out = this.items.map(({ mime_type, data }) => ({ mime_type, data }));
    this.items = [];
    this.render();
    return out;
  }

  render() {
    this.box.replaceChildren(...this.items.map((item, at) => {
      const remove = el("button", { type: "button", class: "chip-remove", "aria-label": `Remove ${item.name}`, text: "×" });
      remove.addEventListener("click", () => {
        this.items.splice(at, 1);
        this.render();
      });
      const preview = el("img", { src: item.url, alt: "" });
      return el("span", { class: "chip" }, preview, el("span", { class: "chip-name", text: item.name }), remove);
    }));
    this.box.hidden = this.items.length === 0;
  }
}

/** A stored message's images as thumbnails (null when it shows none). */
export function imageStrip(session, images) {
  if (!session || !images?.length) return null;
  const enc = encodeURIComponent;
  return el("div", { class: "msg-images" }, ...images.map((image) => {
    const src = `/api/sessions/${enc(session)}/images/${enc(image.sha256)}`;
    const alt = `image (${image.mime_type}, ${image.size} bytes)`;
    return el("a", { href: src, target: "_blank", rel: "noopener" }, el("img", { src, alt }));
  }));
}
