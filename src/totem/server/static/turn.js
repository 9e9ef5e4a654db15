// One answer of the agent, drawn from live events or from stored parts: reasoning (collapsed),
// text (Markdown), tool calls (input and output collapsible), sub-agent threads, notices,
// permission and ask questions inline, and how the run ended.

import { diffStat, diffView } from "./diff.js";
import { renderMarkdown } from "./markdown.js";
import { h, summarizeInput } from "./util.js";

const dirty = new Set();
let scheduled = false;

function schedule(block) {
  dirty.add(block);
  if (scheduled) return;
  scheduled = true;
  setTimeout(() => {
    scheduled = false;
    for (const b of dirty) b.el.innerHTML = renderMarkdown(b.raw);
    dirty.clear();
    for (const fn of afterRender) fn();
  }, 30);
}
export const afterRender = [];

const FINISH = {
  aborted: "Stopped", step_limit: "Step limit reached", repeat: "Stopped: the model kept repeating itself",
  rejected: "Stopped after three refused actions", error: "Failed",
  unverified: "The answer claims a change that was not made",
  truncated: "The answer is cut: it reached the model's output limit",
};

export class Turn {
  constructor(parent, { compact = false, model = "" } = {}) {
    this.compact = compact;
    this.el = h("div", { class: compact ? "turn compact" : "turn" });
    this.body = h("div", { class: "turn-body" });
    this.foot = h("div", { class: "foot" });
    this.el.append(this.body, this.foot);
    parent.append(this.el);
    this.block = null; // the text or reasoning block being streamed
    this.tools = new Map();
    this.cards = new Map();
    this.model = model;
    this.workingEl = null;
  }

  _mdBlock(kind) {
    if (this.block && this.block.kind === kind) return this.block;
    const el = h("div", { class: "md" });
    if (kind === "reasoning") {
      const summary = h("summary", {}, h("span", { class: "rs", text: "Thinking…" }));
      const details = h("details", { class: "block reasoning" }, summary, h("div", { class: "body" }, el));
      this._add(details);
      this.block = { kind, el, raw: "", details, summary };
    } else {
      this._add(el);
      this.block = { kind, el, raw: "" };
    }
    return this.block;
  }

  _add(node) {
    if (this.workingEl && this.workingEl.parentNode === this.body) this.body.insertBefore(node, this.workingEl);
    else this.body.append(node);
  }

  seal() {
    if (this.block && this.block.kind === "reasoning") this.block.summary.firstChild.textContent = "Thought";
    this.block = null;
  }

  text(delta) {
    if (this.block && this.block.kind === "reasoning") this.seal();
    const b = this._mdBlock("text");
    b.raw += delta;
    schedule(b);
  }

  reasoning(delta) {
    const b = this._mdBlock("reasoning");
    b.raw += delta;
    schedule(b);
  }

  working(on) {
    if (on && !this.workingEl) {
      this.workingEl = h("div", { class: "working", text: "Working…" });
      this.body.append(this.workingEl);
    } else if (!on && this.workingEl) {
      this.workingEl.remove();
      this.workingEl = null;
    }
  }

  toolStart({ call_id, name, input, from_text }) {
    this.seal();
    const status = h("span", { class: "status", text: "running…" });
    const out = h("pre", { class: "output", text: "" });
    const body = h("div", { class: "body" },
      h("div", { class: "label", text: "Input" }),
      h("pre", { class: "input", text: JSON.stringify(input ?? {}, null, 2) }),
      h("div", { class: "label", text: "Output" }), out);
    const arg = summarizeInput(input) + (from_text ? " (written as text)" : "");
    const el = h("details", { class: "block tool running", dataset: { call: call_id, tool: name } },
      h("summary", {}, h("span", { class: "name", text: name }), h("span", { class: "arg", text: arg }), status),
      body);
    this._add(el);
    const tool = { el, status, out, body, thread: null };
    this.tools.set(call_id, tool);
    return tool;
  }

  toolProgress({ call_id, message, progress, total }) {
    const tool = this.tools.get(call_id);
    if (!tool) return;
    const amount = progress !== null && progress !== undefined && total ? ` ${progress}/${total}` : "";
    tool.status.textContent = `running…${amount} ${message || ""}`.trim();
  }

  toolEnd({ call_id, name, output, is_error, title, diff, diagnostics }) {
    const tool = this.tools.get(call_id) || this.toolStart({ call_id, name, input: null });
    tool.el.classList.remove("running");
    tool.el.classList.add(is_error ? "error" : "completed");
    const aborted = (output || "").includes("[Aborted by user]");
    const shown = tool.el.querySelector(".arg").textContent;
    const more = title && !shown.includes(title) ? ` · ${title}` : "";
    tool.status.textContent = aborted ? "aborted" : is_error ? "error" : `done${more}`;
    tool.out.textContent = output || "(no output)";
    if (diff && !is_error) {
      tool.status.textContent += ` · ${diffStat(diff)}`;
      tool.body.append(h("div", { class: "label", text: "Diff" }), diffView(diff));
    }
    if (diagnostics) {  // a language server's new errors in the changed files
      tool.status.textContent += " · diagnostics";
      tool.body.append(h("div", { class: "label", text: "Diagnostics" }),
        h("pre", { class: "diagnostics", text: diagnostics }));
      tool.el.classList.add("diagnosed");
    }
    if (tool.thread) tool.thread.working(false);
  }

  storedTool(part) {
    const tool = this.toolStart(part);
    const images = part.images ? `\n[${part.images} image${part.images > 1 ? "s" : ""}]` : "";
    if (part.state === "completed" || part.state === "error") {
      this.toolEnd({ ...part, output: (part.output || "") + images, is_error: part.state === "error",
        diff: (part.meta && part.meta.diff) || "",
        diagnostics: (part.meta && part.meta.diagnostics) || "" });
    } else {
      tool.status.textContent = part.state;
    }
    return tool;
  }

  thread(call_id, agent, model) {
    const tool = this.tools.get(call_id) || this.toolStart({ call_id, name: "task", input: null });
    if (!tool.thread) {
      const box = h("div", { class: "thread", dataset: { call: call_id } },
        h("div", { class: "thread-head", text: `${agent} · ${model}` }));
      tool.el.after(box);
      tool.thread = new Turn(box, { compact: true, model });
    }
    return tool.thread;
  }

  agentEvent({ call_id, agent, model, event }) {
    const thread = this.thread(call_id, agent, model);
    if (event.type === "run_started") thread.working(true);
    else if (event.type === "run_finished") {
      thread.working(false);
      if (event.reason !== "finished") thread.notice(`${agent}: ${event.reason} ${event.detail || ""}`, "warning");
      const u = event.usage;
      if (u) {
        const money = event.cost != null ? ` · $${event.cost.toFixed(4)}` : "";
        const head = thread.el.parentElement.querySelector(":scope > .thread-head");
        if (head) head.textContent = `${agent} · ${model} · ${(u.input + u.output).toLocaleString("en-US")} tokens${money}`;
      }
    } else apply(thread, event);
  }

  notice(text, level = "info") {
    this.seal();
    this._add(h("div", { class: `notice ${level}`, text }));
  }

  summary(part) {
    this.seal();
    if (part.kind !== "summary") return;
    const md = h("div", { class: "md" });
    md.innerHTML = renderMarkdown(part.text);
    this._add(h("details", { class: "block summary" },
      h("summary", {}, "Summary of earlier turns"), h("div", { class: "body" }, md)));
  }

  synthetic(text) {
    this.seal();
    this._add(h("div", { class: "msg-user synthetic", text: `totem: ${text}` }));
  }

  // The plan a plan-mode run ended with: its steps, editable one a line, and the choices.
  plan(ev, onApprove) {
    this.seal();
    const steps = h("textarea", { class: "plan-steps", rows: String(Math.min(12, ev.steps.length + 1)),
      "aria-label": "The plan's steps, one a line" });
    steps.value = ev.steps.join("\n");
    const card = h("div", { class: "ask plan-card" },
      h("div", { class: "q", text: `Plan (${ev.steps.length} steps): approve it, edit the steps, or keep planning.` }),
      steps,
      h("div", { class: "options" },
        h("button", { type: "button", class: "primary", text: "Approve the plan", onclick: () =>
          onApprove(steps.value.split("\n").map((s) => s.trim()).filter(Boolean), card) }),
        h("button", { type: "button", text: "Keep planning", onclick: () => {
          for (const b of card.querySelectorAll("button")) b.disabled = true;
          const prompt = document.getElementById("prompt");
          prompt.placeholder = "What should change in the plan?";
          prompt.focus();
        } })));
    this._add(card);
  }

  ask(ev, onAnswer) {
    this.seal();
    const card = h("div", { class: "ask", dataset: { request: ev.request_id } });
    const options = h("div", { class: "options" });
    if (ev.type === "permission") {
      card.append(h("div", { class: "q" }, "Allow ", h("code", { text: ev.tool }), ` to ${ev.title}?`));
      const shown = (ev.patterns || []).filter((p) => p !== ev.title).slice(0, 10);
      if (ev.diff) card.append(diffView(ev.diff));
      else if (shown.length) card.append(h("div", { class: "patterns", text: shown.join("\n") }));
      if (ev.always) {
        card.append(h("div", { class: "always" }, "Always allows, in this project: ",
          ev.always.length ? h("code", { text: ev.always.join(", ") }) : "nothing (this will ask again)"));
      }
      const note = h("input", { type: "text", placeholder: "Why not? (sent to the model)", hidden: true });
      const send = (reply, message = "") => onAnswer({ request_id: ev.request_id, reply, message }, card);
      options.append(
        h("button", { type: "button", class: "primary", text: "Allow once", onclick: () => send("once") }),
        h("button", { type: "button", text: "Always allow", onclick: () => send("always") }),
        h("button", { type: "button", text: "Reject", onclick: () => send("reject") }),
        h("button", { type: "button", text: "Reject with a message…", onclick: (e) => {
          if (note.hidden) { note.hidden = false; note.focus(); e.target.textContent = "Send rejection"; }
          else send("reject", note.value.trim());
        } }),
        note);
    } else {
      card.append(h("div", { class: "q", text: ev.question }));
      for (const option of ev.options || []) {
        options.append(h("button", { type: "button", text: option,
          onclick: () => onAnswer({ request_id: ev.request_id, answer: option }, card) }));
      }
      if (ev.allow_free !== false) {
        const free = h("input", { type: "text", placeholder: "Your answer…" });
        free.addEventListener("keydown", (e) => {
          if (e.key === "Enter" && free.value.trim()) onAnswer({ request_id: ev.request_id, answer: free.value.trim() }, card);
        });
        options.append(free, h("button", { type: "button", text: "Answer", onclick: () => {
          if (free.value.trim()) onAnswer({ request_id: ev.request_id, answer: free.value.trim() }, card);
        } }));
      }
      options.append(h("button", { type: "button", class: "ghost", text: "Skip",
        onclick: () => onAnswer({ request_id: ev.request_id, answer: null }, card) }));
    }
    card.append(options);
    this._add(card);
    this.cards.set(ev.request_id, card);
  }

  answered(request_id, answer) {
    const card = this.cards.get(request_id);
    if (!card || card.classList.contains("done")) return;
    card.classList.add("done");
    const options = card.querySelector(".options");
    if (options) options.remove();
    card.append(h("div", { class: "answer", text: answer === null ? "No answer" : `→ ${answer}` }));
  }

  label(text) {
    let el = this.foot.querySelector(".label-text");
    if (!el) { el = h("span", { class: "label-text" }); this.foot.prepend(el); }
    el.textContent = text;
  }

  finish(ev) {
    this.working(false);
    this.seal();
    for (const card of this.cards.values()) if (!card.classList.contains("done")) this.answered(card.dataset.request, null);
    if (!this.compact && this.model) this.label(`${this.model}${ev.steps ? ` · ${ev.steps} step${ev.steps > 1 ? "s" : ""}` : ""}`);
    if (ev.reason !== "finished") {
      const label = FINISH[ev.reason] || ev.reason;
      const detail = ev.detail ? `: ${ev.detail}` : "";
      this._add(h("div", { class: `finish ${ev.reason}`, text: `${label}${detail}` }));
    }
  }
}

// Live events of a (sub-)agent's run onto a turn; questions and the end are the caller's.
export function apply(turn, ev) {
  switch (ev.type) {
    case "text": turn.text(ev.text); break;
    case "reasoning": turn.reasoning(ev.text); break;
    case "tool_start": turn.toolStart(ev); break;
    case "tool_progress": turn.toolProgress(ev); break;
    case "tool_end": turn.toolEnd(ev); break;
    case "agent": turn.agentEvent(ev); break;
    case "notice": turn.notice(ev.text, ev.level); break;
    case "step_finished": turn.seal(); break;
    default: break;
  }
}

// Stored assistant parts onto a turn.
export function applyParts(turn, message, { onThread } = {}) {
  for (const part of message.parts) {
    switch (part.type) {
      case "text": turn.text(part.text); turn.seal(); break;
      case "reasoning": turn.reasoning(part.text); turn.seal(); break;
      case "tool": {
        const tool = turn.storedTool(part);
        if (part.meta && part.meta.session_id && onThread) onThread(tool, part.meta);
        break;
      }
      case "notice": turn.notice(part.text, part.level); break;
      case "summary": turn.summary(part); break;
      default: break;
    }
  }
  turn.seal();
}
