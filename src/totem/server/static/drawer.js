// The sidebar as a drawer on narrow screens (a phone): the menu button opens it, Escape, the
// backdrop or choosing a session closes it. On a wide screen the sidebar is always shown and
// none of this is visible.

const $ = (id) => document.getElementById(id);

export class Drawer {
  constructor() {
    this.root = $("app");
    this.menu = $("menu");
    this.backdrop = $("backdrop");
    this.menu.addEventListener("click", () => (this.isOpen ? this.close() : this.open()));
    this.backdrop.addEventListener("click", () => this.close());
    window.addEventListener("hashchange", () => this.close({ focus: false }));
  }

  get isOpen() { return this.root.classList.contains("drawer-open"); }

  open() {
    this.root.classList.add("drawer-open");
    this.backdrop.hidden = false;
    this.menu.setAttribute("aria-expanded", "true");
    $("new-session").focus();
  }

  close({ focus = true } = {}) {
    if (!this.isOpen) return;
    this.root.classList.remove("drawer-open");
    this.backdrop.hidden = true;
    this.menu.setAttribute("aria-expanded", "false");
    if (focus && getComputedStyle(this.menu).display !== "none") this.menu.focus();
  }
}
