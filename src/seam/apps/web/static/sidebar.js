// The session list on a narrow screen: a panel the Sessions button opens and Escape (or
// choosing a session) closes.

let toggleButton = null;

export function closeSidebar() {
  document.body.classList.remove("sidebar-open");
  toggleButton?.setAttribute("aria-expanded", "false");
}

/** Make `toggle` open and close the panel; `search` gets the focus when it opens. */
export function sidebarToggle(toggle, search) {
  toggleButton = toggle;
  toggle.addEventListener("click", () => {
    const open = !document.body.classList.contains("sidebar-open");
    document.body.style.setProperty("--bar-h", `${document.querySelector(".bar").getBoundingClientRect().bottom}px`);
    document.body.classList.toggle("sidebar-open", open);
    toggle.setAttribute("aria-expanded", String(open));
    if (open) search.focus();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && document.body.classList.contains("sidebar-open")) {
      closeSidebar();
      toggle.focus();
    }
  });
}
