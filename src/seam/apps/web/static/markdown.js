// Markdown to safe HTML: marked renders (GitHub flavour, code blocks), DOMPurify removes
// anything a model's answer could use to run script or restyle the page.
import { Marked } from "./vendor/marked-18.2.1.esm.js";
import DOMPurify from "./vendor/purify-3.5.0.es.js";

const marked = new Marked({ gfm: true, breaks: false });

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  // Links from an answer open elsewhere and never get the page's window.
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** Render `text` (Markdown) into `element`, replacing what it held. */
export function renderMarkdown(element, text) {
  const html = marked.parse(text ?? "", { async: false });
  element.innerHTML = DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select"],
    FORBID_ATTR: ["style"],
  });
}
