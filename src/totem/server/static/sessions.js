// The sidebar's sessions: the list (searched on the server as you type), and renaming and
// deleting the open session from the chat's header.

import { api, fmtWhen, h } from "./util.js";

const $ = (id) => document.getElementById(id);

export class SessionList {
  constructor(app) {
    this.app = app;
    this.query = "";
    this.timer = null;
    const search = $("session-search");
    search.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.search(search.value), 200);
    });
    search.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && search.value) { e.stopPropagation(); search.value = ""; this.search(""); }
    });
  }

  async search(query) {
    this.query = query.trim();
    await this.app.loadSessions();
  }

  url() { return this.query ? `/api/sessions?q=${encodeURIComponent(this.query)}` : "/api/sessions"; }

  render(sessions, current) {
    const box = $("session-list");
    box.replaceChildren();
    if (!sessions.length) {
      box.append(h("div", { class: "lead no-sessions", text: this.query ? "No session matches." : "No sessions yet." }));
    }
    for (const s of sessions) {
      const active = current && current.id === s.id;
      box.append(h("a", { class: `session${active ? " active" : ""}`, href: `#/s/${s.id}`, dataset: { session: s.id },
        "aria-current": active ? "page" : null, title: s.title || "New session" },
        h("span", { class: "t" }, s.running ? h("span", { class: "live", title: "running" }) : null, s.title || "New session"),
        h("span", { class: "m", text: `${fmtWhen(s.updated)}${s.model ? ` · ${s.model}` : ""}${s.parent_id ? " · fork" : ""}` })));
    }
  }

  // Rename in place: Enter saves, Escape gives the old title back.
  rename(session) {
    const title = $("session-title");
    const input = h("input", { type: "text", id: "rename-input", class: "rename", value: session.title || "",
      "aria-label": "Session title", maxlength: 200 });
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const wanted = input.value.trim();
      input.replaceWith(title);
      if (save && wanted && wanted !== session.title) {
        try {
          const { session: renamed } = await api(`/api/sessions/${session.id}`, { method: "PATCH", body: { title: wanted } });
          this.app.renamed(renamed);
        } catch (err) { this.app.banner(`Rename: ${err.message}`); }
      }
      $("rename-session").focus();
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); finish(true); }
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); finish(false); }
    });
    input.addEventListener("blur", () => finish(true));
    title.replaceWith(input);
    input.focus();
    input.select();
  }

  async remove(session) {
    const name = session.title || "this session";
    if (!window.confirm(`Delete "${name}" and its messages? This cannot be undone.`)) return;
    try {
      await api(`/api/sessions/${session.id}`, { method: "DELETE" });
    } catch (err) { this.app.banner(`Delete: ${err.message}`); return; }
    this.app.sessions = this.app.sessions.filter((s) => s.id !== session.id);
    location.hash = "#/";
    await this.app.loadSessions();
  }
}
