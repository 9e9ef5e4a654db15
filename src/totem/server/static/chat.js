// The conversation: a snapshot of the store, then the live events of the session's runs
// (server-sent events; the browser resumes with Last-Event-ID after a cut).

import { Turn, afterRender, apply, applyParts } from "./turn.js";
import { api, fmtCost, fmtInt, h, normalTodos } from "./util.js";

const $ = (id) => document.getElementById(id);

export class Chat {
  constructor(app) {
    this.app = app;
    this.box = $("conversation");
    this.sessionId = null;
    this.source = null;
    this.turn = null;
    this.running = false;
    this.pending = null; // what to do once the current run has stopped
    this.usage = null;
    this.cost = null;
    this.todos = [];
    this.stick = true;
    this.box.addEventListener("scroll", () => {
      this.stick = this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight < 60;
    });
    afterRender.push(() => this.scroll());
  }

  scroll() { if (this.stick) this.box.scrollTop = this.box.scrollHeight; }

  close() {
    if (this.source) this.source.close();
    this.source = null;
  }

  empty() {
    this.close();
    this.sessionId = null;
    this.box.replaceChildren(h("div", { class: "empty" },
      h("h2", { text: "What should totem do?" }),
      h("p", { text: "Type a request below. Commands of this project appear as chips above the box." })));
    this.setRunning(false);
    this.usage = null;
    this.cost = null;
    this.setTodos([]);
    this.showUsage();
  }

  async open(sessionId) {
    this.close();
    this.sessionId = sessionId;
    const snap = await api(`/api/sessions/${sessionId}`);
    if (this.sessionId !== sessionId) return null;
    this.render(snap);
    this.connect(snap.after);
    return snap;
  }

  render(snap) {
    this.box.replaceChildren();
    this.turn = null;
    this.running = false;
    this.usage = { ...snap.usage };
    this.cost = snap.cost;
    let todos = [];
    if (!snap.messages.length && !snap.live) this.box.append(h("div", { class: "empty" },
      h("h2", { text: snap.session.title || "New session" }), h("p", { text: "No messages yet." })));
    for (const message of snap.messages) {
      const text = message.parts.filter((p) => p.type === "text");
      if (message.role === "user") {
        const first = text[0];
        if (first && first.synthetic) { (this.turn || this.newTurn()).synthetic(first.text); continue; }
        if (message.parts.some((p) => p.type === "summary")) continue;
        this.userMessage(first ? first.text : "", first && first.model_text, message.id);
        this.newTurn();
        continue;
      }
      const turn = this.turn || this.newTurn();
      applyParts(turn, message, { onThread: (tool, meta) => this.threadLoader(tool, meta) });
      turn.el.dataset.message = message.id;
      if (message.model) turn.label(message.model);
      for (const part of message.parts) {
        if (part.type === "tool" && part.name === "todo" && part.input && part.input.todos) todos = part.input.todos;
      }
    }
    this.addForkButtons();
    this.setTodos(normalTodos(todos));
    this.setRunning(Boolean(snap.live));
    this.showUsage();
    this.stick = true;
    this.scroll();
  }

  newTurn() {
    this.turn = new Turn(this.box);
    return this.turn;
  }

  userMessage(text, modelText, messageId) {
    const el = h("div", { class: "msg-user", dataset: { message: messageId || "" } }, text);
    if (modelText && modelText !== text) {
      el.append(h("details", { class: "expanded" }, h("summary", { text: "what the model received" }),
        h("pre", { text: modelText })));
    }
    this.box.append(el);
  }

  addForkButtons() {
    for (const turn of this.box.querySelectorAll(":scope > .turn")) {
      const id = turn.dataset.message || null;
      if (!id) continue;
      turn.querySelector(".foot").append(h("button", { type: "button", class: "small ghost",
        text: "Fork from here", title: "A new session with the conversation up to this answer",
        onclick: () => this.app.fork(id) }));
    }
  }

  threadLoader(tool, meta) {
    const box = h("div", { class: "thread" },
      h("div", { class: "thread-head", text: `${meta.agent || "agent"} · ${meta.model || ""}` }));
    const button = h("button", { type: "button", class: "small", text: "Show the thread" });
    button.addEventListener("click", async () => {
      button.disabled = true;
      const snap = await api(`/api/sessions/${meta.session_id}`);
      button.remove();
      const turn = new Turn(box, { compact: true });
      for (const message of snap.messages) if (message.role === "assistant") applyParts(turn, message);
    });
    box.append(button);
    if (meta.note) box.append(h("div", { class: "notice warning", text: meta.note }));
    tool.el.after(box);
  }

  connect(after) {
    const id = this.sessionId;
    const source = new EventSource(`/api/sessions/${id}/events?after=${after}`);
    this.source = source;
    source.onmessage = (e) => {
      if (this.source !== source) return;
      const ev = JSON.parse(e.data);
      if (ev.type === "resync") { this.open(id); return; }
      this.handle(ev);
    };
    source.onopen = () => { // clears only what the stream itself said
      if (this.streamBanner) this.app.banner(null);
      this.streamBanner = false;
    };
    source.onerror = () => {
      if (this.source !== source) return;
      if (source.readyState === EventSource.CLOSED) {
        this.streamBanner = true;
        this.app.banner("Lost the connection to totem serve. Reload the page (or open the URL it printed).");
        setTimeout(() => { if (this.source === source && this.sessionId === id) this.open(id).catch(() => {}); }, 3000);
      } else {
        this.streamBanner = true;
        this.app.banner("Reconnecting…");
      }
    };
  }

  handle(ev) {
    const turn = this.turn;
    switch (ev.type) {
      case "user": {
        const empty = this.box.querySelector(".empty");
        if (empty) empty.remove();
        for (const old of this.box.querySelectorAll(".recovery")) old.remove();
        this.userMessage(ev.text);
        this.newTurn().working(true);
        this.setRunning(true);
        this.stick = true;
        this.app.sessionsChanged();
        break;
      }
      case "run_started": if (turn) turn.model = ev.model; break;
      case "permission":
      case "question":
        (turn || this.newTurn()).ask(ev, (answer, card) => this.answer(ev.type, answer, card));
        break;
      case "answered": if (turn) turn.answered(ev.request_id, ev.answer); break;
      case "todo": this.setTodos(normalTodos(ev.todos)); break;
      case "plan": (turn || this.newTurn()).plan(ev, (steps, card) => this.approvePlan(steps, card)); break;
      case "step_finished": {
        if (turn) turn.seal();
        this.addUsage(ev.usage, ev.cost);
        break;
      }
      case "run_finished":
        if (turn) turn.finish(ev);
        this.setRunning(false);
        this.app.sessionsChanged();
        if (this.pending) { const next = this.pending; this.pending = null; next(); break; }
        if (ev.reason === "error" && turn) this.offerRecovery(turn, "Retry");
        break;
      case "notice":
        apply(turn || this.newTurn(), ev);
        if (/retrying in/.test(ev.text || "") && this.running) this.offerRecovery(this.turn, "Retry now");
        break;
      default:
        // a sub-agent's steps count in the session's totals too
        if (ev.type === "agent" && ev.event && ev.event.type === "step_finished") this.addUsage(ev.event.usage, ev.event.cost);
        apply(turn || this.newTurn(), ev);
    }
    this.scroll();
  }

  async answer(kind, body, card) {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    try {
      await api(`/api/sessions/${this.sessionId}/${kind === "permission" ? "reply" : "answer"}`, { method: "POST", body });
    } catch (err) {
      for (const b of card.querySelectorAll("button")) b.disabled = false;
      this.app.banner(`Could not answer: ${err.message}`);
    }
  }

  addUsage(usage, cost) {
    if (!usage) return;
    this.usage = this.usage || {};
    for (const [k, v] of Object.entries(usage)) this.usage[k] = (this.usage[k] || 0) + v;
    this.cost = cost === undefined || cost === null || this.cost === null ? null : this.cost + cost;
    this.showUsage();
  }

  showUsage() {
    const u = this.usage;
    const el = $("usage");
    if (!u || (!u.input && !u.output)) { el.textContent = ""; return; }
    const cached = u.cache_read ? ` (${fmtInt(u.cache_read)} cached)` : "";
    const cost = this.cost !== null && this.cost !== undefined ? ` · ${fmtCost(this.cost)}` : "";
    el.textContent = `${fmtInt(u.input)} in${cached} · ${fmtInt(u.output)} out${cost}`;
    el.title = "Tokens of this session: prompt (in), answers (out)";
  }

  setTodos(todos) {
    this.todos = todos;
    const box = $("todos");
    if (!todos.length) { box.hidden = true; box.replaceChildren(); return; }
    const done = todos.filter((t) => t.status === "done").length;
    const marks = { done: "☑", in_progress: "▶", pending: "☐" };
    box.replaceChildren(h("h3", { text: `Tasks ${done}/${todos.length}` }),
      h("ul", {}, todos.map((t) => h("li", { class: t.status },
        h("span", { class: "mark", text: marks[t.status] || "☐" }), t.content))));
    box.hidden = false;
  }

  setRunning(on) {
    this.running = on;
    $("abort").hidden = !on;
    $("send").hidden = on;
    $("run-state").textContent = on ? "working…" : "";
  }

  async send(text, { model, agent, mode }) {
    await api(`/api/sessions/${this.sessionId}/runs`, { method: "POST", body: { text, model, agent, mode } });
  }

  // A plan-mode run's plan: approved as it is or as edited (the session goes on in the
  // normal mode, the steps as its task list), or kept planning (the box, still in plan mode).
  async approvePlan(steps, card) {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    $("mode-picker").value = "default";
    try {
      await api(`/api/sessions/${this.sessionId}/runs`, { method: "POST",
        body: { text: "Approve the plan", plan: steps, mode: "default", model: this.app.currentModel() } });
    } catch (err) {
      for (const b of card.querySelectorAll("button")) b.disabled = false;
      this.app.banner(`Could not approve the plan: ${err.message}`);
    }
  }

  // The model server does not answer: retry now, or stop and choose another model. Shown
  // under the run's retry notices and under a failed run.
  offerRecovery(turn, retryLabel) {
    for (const old of this.box.querySelectorAll(".recovery")) old.remove();
    const retry = h("button", { type: "button", class: "primary small", text: retryLabel, onclick: () => this.retry() });
    const other = h("button", { type: "button", class: "small", text: "Choose another model", onclick: () => this.chooseModel() });
    turn._add(h("div", { class: "recovery", role: "group", "aria-label": "The model did not answer" }, retry, other));
    this.scroll();
  }

  lastText() {
    const users = this.box.querySelectorAll(":scope > .msg-user");
    const last = users[users.length - 1];
    return last ? last.firstChild.textContent : "";
  }

  // Stop the run when one goes on, then `next` once it has ended.
  afterStop(next) {
    for (const old of this.box.querySelectorAll(".recovery")) old.remove();
    if (!this.running) { next(); return; }
    this.pending = next;
    this.abort().catch((err) => { this.pending = null; this.app.banner(err.message); });
  }

  retry() {
    const text = this.lastText();
    this.afterStop(() => this.app.sendText(text));
  }

  chooseModel() {
    const text = this.lastText();
    this.afterStop(() => {
      const prompt = $("prompt");
      prompt.value = text;
      const picker = $("model-picker");
      picker.classList.add("attention");
      picker.addEventListener("change", () => picker.classList.remove("attention"), { once: true });
      picker.focus();
      this.app.banner("Choose another model, then send: your message is back in the box.");
    });
  }

  async abort() {
    if (this.sessionId) await api(`/api/sessions/${this.sessionId}/abort`, { method: "POST", body: {} });
  }
}
