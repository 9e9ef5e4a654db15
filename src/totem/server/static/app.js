// The page: sessions in the sidebar, the chat, the Agents panel and Settings (hash routes
// #/s/ID, #/agents, #/settings).

import { Chat } from "./chat.js";
import { Drawer } from "./drawer.js";
import { AgentsPanel, SettingsPanel } from "./panels.js";
import { SessionList } from "./sessions.js";
import { api, fmtWhen, h } from "./util.js";

const $ = (id) => document.getElementById(id);

class App {
  constructor() {
    this.chat = new Chat(this);
    this.agents = new AgentsPanel(this, $("agents-view"));
    this.settings = new SettingsPanel(this, $("settings-view"));
    this.drawer = new Drawer();
    this.list = new SessionList(this);
    this.info = null;
    this.sessions = [];
    this.session = null;
    this.models = null;
    this.modelIds = [];
    this.choice = {}; // session id -> chosen model
    this.listTimer = null;
    this.loadedAt = null;
    // a message sent while the page still opens waits for its first route, which would
    // otherwise clear the session the message has just made
    this.firstRoute = new Promise((resolve) => { this.routed = resolve; });
  }

  async start() {
    this.bind();
    const models = this.refreshModels().catch((err) => this.banner(`Models: ${err.message}`));
    await Promise.all([this.refreshInfo(), this.loadSessions()]);
    window.addEventListener("hashchange", () => this.route());
    await this.route();
    this.routed();
    await models;
    this.loadedAt = performance.now(); // ms from the start of the navigation: the page is drawn
  }

  bind() {
    $("new-session").addEventListener("click", () => this.startNew());
    $("rename-session").addEventListener("click", () => this.session && this.list.rename(this.session));
    $("delete-session").addEventListener("click", () => this.session && this.list.remove(this.session));
    document.addEventListener("click", (e) => this.copyCode(e));
    $("composer").addEventListener("submit", (e) => { e.preventDefault(); this.send(); });
    const prompt = $("prompt");
    prompt.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); this.send(); }
    });
    prompt.addEventListener("input", () => this.autosize());
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.drawer.isOpen) { e.preventDefault(); this.drawer.close(); return; }
      if (e.key === "Escape" && this.chat.running && !$("chat-view").hidden) {
        e.preventDefault();
        this.chat.abort().catch((err) => this.banner(err.message));
      }
    });
    $("abort").addEventListener("click", () => this.chat.abort().catch((err) => this.banner(err.message)));
    $("fork-session").addEventListener("click", () => this.fork(null));
    $("undo-session").addEventListener("click", () => this.undo());
    $("redo-session").addEventListener("click", () => this.undo({ redo: true }));
    $("model-picker").addEventListener("change", (e) => {
      const value = e.target.value;
      if (value === "__other__") {
        const typed = window.prompt("Model to use, as provider/model:");
        if (typed) { this.addModelOption(typed.trim()); e.target.value = typed.trim(); } else e.target.value = this.currentModel();
      }
      if (this.session) this.choice[this.session.id] = e.target.value;
    });
  }

  autosize() {
    const el = $("prompt");
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight + 2, window.innerHeight * 0.4)}px`;
  }

  banner(text) {
    const el = $("banner");
    el.hidden = !text;
    el.textContent = text || "";
  }

  // routes -----------------------------------------------------------------------------------

  async route() {
    const hash = location.hash || "#/";
    const tab = hash.startsWith("#/agents") ? "agents" : hash.startsWith("#/settings") ? "settings" : "chat";
    for (const a of document.querySelectorAll("#tabs .tab")) a.classList.toggle("active", a.dataset.tab === tab);
    $("chat-view").hidden = tab !== "chat";
    $("agents-view").hidden = tab !== "agents";
    $("settings-view").hidden = tab !== "settings";
    if (tab !== "chat") $("topbar-title").textContent = tab === "agents" ? "Agents" : "Settings";
    else if (!hash.startsWith("#/s/")) $("topbar-title").textContent = "New session";
    try {
      if (tab === "agents") return await this.agents.show();
      if (tab === "settings") return await this.settings.show();
      const match = hash.match(/^#\/s\/([\w-]+)/);
      const id = match ? match[1] : null;
      if (id && (!this.session || this.session.id !== id || !this.chat.sessionId)) await this.openSession(id);
      else if (id) this.showHead();
      else this.showEmpty();
    } catch (err) {
      this.banner(err.message);
    }
  }

  showEmpty() {
    this.session = null;
    this.chat.empty();
    $("session-title").textContent = "New session";
    $("topbar-title").textContent = "New session";
    $("session-meta").textContent = this.info ? this.info.root : "";
    for (const id of ["fork-session", "undo-session", "redo-session", "export-session", "rename-session", "delete-session"]) $(id).hidden = true;
    this.renderSessions();
    this.selectModel(null);
    $("prompt").focus();
  }

  async openSession(id) {
    const snap = await this.chat.open(id);
    if (!snap) return;
    this.session = snap.session;
    this.showHead();
    this.renderSessions();
    this.selectModel(this.choice[id] || snap.session.model);
  }

  showHead() {
    const s = this.session;
    $("session-title").textContent = s.title || "New session";
    $("session-title").title = s.title || "";
    $("topbar-title").textContent = s.title || "New session";
    const forked = s.parent_id ? " · forked" : "";
    $("session-meta").textContent = `${s.model || "default model"} · ${fmtWhen(s.created)}${forked}`;
    for (const id of ["fork-session", "undo-session", "redo-session", "rename-session", "delete-session"]) $(id).hidden = false;
    const exp = $("export-session");
    exp.hidden = false;
    exp.href = `/api/sessions/${s.id}/export`;
    exp.setAttribute("download", `totem-${s.id}.json`);
  }

  // sessions ---------------------------------------------------------------------------------

  async loadSessions() {
    const { sessions } = await api(this.list.url());
    this.sessions = sessions;
    this.renderSessions();
    const current = this.session && sessions.find((s) => s.id === this.session.id);
    if (current) { this.session = current; this.showHead(); }
  }

  sessionsChanged() {
    clearTimeout(this.listTimer);
    this.listTimer = setTimeout(() => this.loadSessions().catch(() => {}), 150);
  }

  renderSessions() {
    this.list.render(this.sessions, this.session);
  }

  renamed(session) {
    this.session = session;
    this.sessions = this.sessions.map((s) => (s.id === session.id ? { ...s, title: session.title } : s));
    this.showHead();
    this.renderSessions();
  }

  // "+ New session": an empty chat; the session is stored when its first message is sent.
  startNew() {
    if (location.hash === "#/" || location.hash === "") this.showEmpty();
    else location.hash = "#/";
    this.drawer.close({ focus: false });
    $("prompt").focus();
  }

  copyCode(e) {
    const button = e.target.closest && e.target.closest("button.copy");
    if (!button) return;
    const code = button.parentElement.querySelector("code");
    navigator.clipboard.writeText(code ? code.textContent : "").then(() => {
      button.classList.add("copied");
      setTimeout(() => button.classList.remove("copied"), 1500);
    }, (err) => this.banner(`Copy: ${err.message}`));
  }

  async newSession() {
    const { session } = await api("/api/sessions", { method: "POST", body: { model: this.currentModel() } });
    this.sessions.unshift(session);
    this.session = session;
    await this.openSession(session.id);
    location.hash = `#/s/${session.id}`; // route() finds it open already
    return session;
  }

  // Put back the files of the session's last request (or, redo, make the undone changes
  // again); what was done joins the conversation (the note to the model is stored, and shown
  // after a reload).
  async undo({ redo = false } = {}) {
    if (!this.session || this.chat.running) return;
    try {
      const { summary } = await api(`/api/sessions/${this.session.id}/undo`, { method: "POST", body: redo ? { redo: true } : {} });
      (this.chat.turn || this.chat.newTurn()).synthetic(summary);
    } catch (err) { this.banner(`${redo ? "Redo" : "Undo"}: ${err.message}`); }
  }

  async fork(messageId) {
    if (!this.session) return;
    try {
      const { session } = await api(`/api/sessions/${this.session.id}/fork`, { method: "POST", body: { message_id: messageId } });
      await this.loadSessions();
      location.hash = `#/s/${session.id}`;
    } catch (err) { this.banner(`Fork: ${err.message}`); }
  }

  async send() {
    const prompt = $("prompt");
    const text = prompt.value.trim();
    if (!text || this.chat.running) return;
    await this.sendText(text);
  }

  // Send `text` with the chosen model and agent; the session is stored now when it is new.
  async sendText(text) {
    const prompt = $("prompt");
    const model = this.currentModel();
    const agent = $("agent-picker").value || null;
    const mode = $("mode-picker").value || "default";
    try {
      await this.firstRoute;
      if (!this.session) await this.newSession();
      prompt.value = "";
      this.autosize();
      await this.chat.send(text, { model, agent, mode });
    } catch (err) {
      prompt.value = text;
      this.banner(err.message);
    }
  }

  // project info, commands, agents, models -------------------------------------------------------

  async refreshInfo() {
    this.info = await api("/api/info");
    $("project").textContent = this.info.name;
    $("project").title = this.info.root;
    $("version").textContent = `totem ${this.info.version}`;
    document.title = `totem · ${this.info.name}`;
    const chips = $("chips");
    const compact = h("button", { type: "button", class: "chip builtin", dataset: { command: "compact" }, text: "/compact",
      title: "Summarize the older turns of this conversation now (the stored history is kept)", onclick: () => this.useCommand("compact") });
    chips.replaceChildren(compact, ...this.info.commands.map((c) => h("button", { type: "button", class: "chip", title: c.description,
      dataset: { command: c.name }, text: `/${c.name}`, onclick: () => this.useCommand(c.name) })));
    const picker = $("agent-picker");
    const chosen = picker.value;
    picker.replaceChildren(h("option", { value: "", text: "(default)" }),
      ...this.info.agents.map((a) => h("option", { value: a.name, text: a.name, title: a.description })));
    picker.value = this.info.agents.some((a) => a.name === chosen) ? chosen : "";
    const modes = $("mode-picker");
    const mode = modes.value || "default";
    modes.replaceChildren(...(this.info.modes || []).map((m) => h("option", { value: m.name, text: m.title, title: m.description })));
    modes.value = (this.info.modes || []).some((m) => m.name === mode) ? mode : "default";
    if (this.info.problems.length) this.banner(this.info.problems.join(" "));
    if (this.info.config_error) this.banner(`Configuration error: ${this.info.config_error}`);
    this.showTrust(this.info.trust);
  }

  // A folder whose own .totem config would change what totem does: say what, and offer trust.
  showTrust(trust) {
    const el = $("trust");
    el.hidden = !trust || trust.trusted;
    if (el.hidden) return el.replaceChildren();
    const button = h("button", { id: "trust-folder", type: "button", class: "primary", text: "Trust this folder",
      onclick: async () => {
        button.disabled = true;
        try {
          const result = await api("/api/trust", { method: "POST" });
          this.showTrust(result.trust);
          await this.refreshInfo();
          await this.refreshModels(true);
        } catch (err) { button.disabled = false; this.banner(err.message); }
      } });
    el.replaceChildren(
      h("strong", { text: "This folder's .totem config would change what totem does:" }),
      h("ul", {}, ...trust.items.map((item) => h("li", { text: item }))),
      h("p", { text: "Until you trust this folder these are ignored (its deny and ask rules still apply). " +
        "Trust is remembered until these files change." }),
      button);
  }

  useCommand(name) {
    const prompt = $("prompt");
    prompt.value = `/${name} `;
    prompt.focus();
    prompt.setSelectionRange(prompt.value.length, prompt.value.length);
    this.autosize();
  }

  async refreshModels(fresh = false) {
    this.models = await api(`/api/models${fresh ? "?refresh=1" : ""}`);
    const picker = $("model-picker");
    const chosen = picker.value;
    picker.replaceChildren();
    this.modelIds = [];
    for (const group of this.models.providers) {
      const og = h("optgroup", { label: group.provider });
      for (const m of group.models) {
        const id = `${group.provider}/${m.id}`;
        this.modelIds.push(id);
        const ctx = m.context_window ? `${Math.round(m.context_window / 1000)}k` : "context unknown";
        const tools = m.tools === false ? "no tools" : m.tools_unreliable ? "tools unreliable" : m.tools ? "" : "tools unknown";
        og.append(h("option", { value: id, text: `${m.id} — ${group.provider}`, title: [id, ctx, tools].filter(Boolean).join(" · ") }));
      }
      if (!group.models.length) og.append(h("option", { disabled: true, text: group.error ? "(cannot list models)" : "(no models listed)" }));
      picker.append(og);
    }
    picker.append(h("option", { value: "__other__", text: "Other model…" }));
    this.selectModel(chosen && chosen !== "__other__" ? chosen : null);
    return this.models;
  }

  addModelOption(id) {
    const picker = $("model-picker");
    if ([...picker.options].some((o) => o.value === id)) return;
    picker.insertBefore(h("option", { value: id, text: id }), picker.firstChild);
  }

  selectModel(wanted) {
    const picker = $("model-picker");
    const value = wanted || (this.session && this.choice[this.session.id]) || (this.session && this.session.model) ||
      (this.models && this.models.default) || "";
    if (!value) return;
    if (!this.models) { this.addModelOption(value); picker.value = value; return; }
    const full = this.modelIds.includes(value) ? value : this.modelIds.find((id) => id.endsWith(`/${value}`)) || value;
    this.addModelOption(full);
    picker.value = full;
  }

  currentModel() {
    const value = $("model-picker").value;
    return value && value !== "__other__" ? value : null;
  }
}

const app = new App();
window.totem = app;
app.start().catch((err) => app.banner(err.message));
