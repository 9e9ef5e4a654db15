// The Agents panel and Settings (providers, local servers, the models table).

import { api, fmtInt, h } from "./util.js";

const SOURCES = [["builtin", "Built in"], ["global", "Saved for all projects"],
  ["project", "Saved for this project"], ["file", "Files of this project (.totem/agents)"]];
const SOURCE_LABEL = Object.fromEntries(SOURCES);

export class AgentsPanel {
  constructor(app, root) {
    this.app = app;
    this.root = root;
    this.selected = null;
  }

  async show() {
    const data = await api("/api/agents");
    this.data = data;
    const list = h("div", { class: "card agent-list" },
      h("button", { type: "button", class: "primary wide", text: "+ New agent", onclick: () => this.edit(null) }));
    for (const [source, label] of SOURCES) {
      const agents = data.agents.filter((a) => a.source === source);
      if (!agents.length) continue;
      list.append(h("div", { class: "group-label", text: label }));
      for (const agent of agents) {
        const key = `${agent.source}/${agent.name}`;
        const choose = async () => { this.selected = key; await this.show(); this.focusSelected(); };
        list.append(h("div", { class: `agent-item${this.selected === key ? " active" : ""}`, dataset: { agent: key },
          role: "button", tabindex: 0, "aria-pressed": this.selected === key ? "true" : "false",
          onclick: choose, onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(); } } },
          h("div", { class: "n" }, agent.name, agent.active ? null : h("span", { class: "badge", text: "overridden" })),
          h("div", { class: "d", text: agent.description })));
      }
    }
    const chosen = data.agents.find((a) => `${a.source}/${a.name}` === this.selected);
    const editor = h("div", { class: "card" });
    this.editorBox = editor;
    this.root.replaceChildren(h("div", { class: "page" },
      h("h1", { text: "Agents" }),
      h("p", { class: "lead", text: "Agents the task tool can start, or that a conversation can run as. Built-in agents and the project's files are read-only; saved agents can be edited here." }),
      data.problems.length ? h("div", { class: "card notice warning", text: data.problems.join("\n") }) : null,
      h("div", { class: "grid2" }, list, editor)));
    if (chosen) this.view(chosen);
    else this.edit(null);
  }

  focusSelected() {
    const item = [...this.root.querySelectorAll(".agent-item")].find((el) => el.dataset.agent === this.selected);
    if (item) item.focus();
  }

  view(agent) {
    if (agent.editable) { this.edit(agent); return; }
    const tools = agent.tools ? agent.tools.join(", ") : "all tools";
    this.editorBox.replaceChildren(
      h("h2", {}, agent.name, h("span", { class: "badge", text: SOURCE_LABEL[agent.source] })),
      h("div", { class: "readonly-note", text: agent.source === "file" ? `Read-only: edit ${agent.path}.` : "Built in: read-only. Save a copy to change it." }),
      h("div", { class: "form" },
        h("label", { class: "k", text: "Description" }), h("div", { text: agent.description }),
        h("label", { class: "k", text: "Tools" }), h("div", { class: "mono", text: tools }),
        h("label", { class: "k", text: "Max steps" }), h("div", { text: agent.maxsteps ?? "the session's" }),
        h("label", { class: "k", text: "Model" }), h("div", { text: agent.model || "the conversation's" }),
        h("label", { class: "k full", text: "Prompt" }),
        h("pre", { class: "full prompt-view", text: agent.prompt })),
      h("div", { class: "row spaced" },
        h("button", { type: "button", text: "Save a copy as a saved agent", onclick: () => this.edit({ ...agent, source: "project", editable: true, copy: true }) })));
  }

  edit(agent) {
    const isNew = !agent || agent.copy;
    const a = agent || { name: "", description: "", tools: null, maxsteps: null, model: "", prompt: "", source: "project" };
    const field = (name, value, attrs = {}) => h("input", { type: "text", name, value: value ?? "", ...attrs });
    const name = field("name", a.name, { placeholder: "reviewer", required: true });
    const description = field("description", a.description, { placeholder: "What it does (the model chooses by this)" });
    const scope = h("select", { name: "scope" },
      h("option", { value: "project", text: "This project", selected: a.source === "project" }),
      h("option", { value: "global", text: "All projects", selected: a.source === "global" }));
    const all = h("input", { type: "checkbox", name: "all-tools", checked: a.tools === null });
    const toolBoxes = this.data.tools.map((t) => h("label", {},
      h("input", { type: "checkbox", name: "tool", value: t, checked: a.tools !== null && a.tools.includes(t), disabled: a.tools === null }), t));
    all.addEventListener("change", () => { for (const l of toolBoxes) l.firstChild.disabled = all.checked; });
    const maxsteps = h("input", { type: "number", name: "maxsteps", min: 1, value: a.maxsteps ?? "", placeholder: "the session's" });
    const model = field("model", a.model, { placeholder: "provider/model (empty: the conversation's)", list: "agent-models" });
    const models = h("datalist", { id: "agent-models" }, (this.app.modelIds || []).map((m) => h("option", { value: m })));
    const prompt = h("textarea", { name: "prompt", placeholder: "You are … (the agent's system prompt)" });
    prompt.value = a.prompt || "";
    const msg = h("div", { class: "msg" });
    const save = async () => {
      const body = { name: name.value.trim(), description: description.value.trim(), scope: scope.value,
        tools: all.checked ? null : toolBoxes.map((l) => l.firstChild).filter((c) => c.checked).map((c) => c.value),
        maxsteps: maxsteps.value ? Number(maxsteps.value) : null, model: model.value.trim() || null, prompt: prompt.value };
      if (!isNew) body.previous = { name: a.name, scope: a.source };
      try {
        await api("/api/agents", { method: "POST", body });
        this.selected = `${body.scope}/${body.name}`;
        await this.app.refreshInfo();
        await this.show();
      } catch (err) { msg.className = "msg bad"; msg.textContent = err.message; }
    };
    const remove = async () => {
      if (!confirm(`Delete the agent ${a.name}?`)) return;
      try {
        await api(`/api/agents/${a.source}/${encodeURIComponent(a.name)}`, { method: "DELETE" });
        this.selected = null;
        await this.app.refreshInfo();
        await this.show();
      } catch (err) { msg.className = "msg bad"; msg.textContent = err.message; }
    };
    this.editorBox.replaceChildren(
      h("h2", { text: isNew ? "New agent" : `Edit ${a.name}` }),
      h("form", { class: "form agent-form", onsubmit: (e) => { e.preventDefault(); save(); } },
        h("label", { class: "k", text: "Name" }), name,
        h("label", { class: "k", text: "Description" }), description,
        h("label", { class: "k", text: "Saved for" }), scope,
        h("label", { class: "k", text: "Tools" }),
        h("div", { class: "tools-pick" }, h("label", {}, all, "all tools"), toolBoxes),
        h("label", { class: "k", text: "Max steps" }), maxsteps,
        h("label", { class: "k", text: "Model" }), h("div", {}, model, models),
        h("label", { class: "k full", text: "Prompt" }), h("div", { class: "full" }, prompt),
        h("div", { class: "row full" },
          h("button", { type: "submit", class: "primary", text: "Save agent" }),
          isNew ? null : h("button", { type: "button", class: "danger", text: "Delete", onclick: remove })),
        h("div", { class: "full" }, msg)));
  }
}

const yesNo = (v, unreliable) => {
  if (unreliable && v !== false) return h("span", { class: "warn", text: "unreliable" });
  if (v === null || v === undefined) return h("span", { class: "unknown", text: "unknown" });
  return h("span", { class: v ? "yes" : "no", text: v ? "yes" : "no" });
};
const num = (v) => (v === null || v === undefined ? h("span", { class: "unknown", text: "unknown" }) : fmtInt(v));
const price = (p) => (p ? `${p.input.toFixed(2)} / ${p.output.toFixed(2)}` : h("span", { class: "unknown", text: "unknown" }));

export class SettingsPanel {
  constructor(app, root) {
    this.app = app;
    this.root = root;
  }

  async show() {
    const data = await api("/api/settings/providers");
    this.templates = data.templates;
    const configured = h("table", { class: "list providers" },
      h("thead", {}, h("tr", {}, ["Name", "Kind", "Base URL", "Key", ""].map((t) => h("th", { text: t })))));
    const rows = h("tbody");
    for (const p of data.providers) {
      const result = h("div", { class: "msg" });
      rows.append(h("tr", { dataset: { provider: p.name } },
        h("td", { class: "mono", text: p.name }), h("td", { text: p.kind }),
        h("td", { class: "mono", text: p.base_url || "(default)" }), h("td", { text: p.key }),
        h("td", {}, h("div", { class: "row" },
          h("button", { type: "button", class: "small", text: "Test", onclick: () => this.test(p.name, result) }),
          p.removable ? h("button", { type: "button", class: "small", text: "Remove", onclick: () => this.remove(p.name) })
            : h("span", { class: "lead", title: "Defined in a project's configuration file: edit that file.", text: "project file" })), result)));
    }
    configured.append(rows);
    this.modelsBox = h("div", { class: "card" }, h("h2", { text: "Models" }), h("p", { class: "lead", text: "Loading…" }));
    this.root.replaceChildren(h("div", { class: "page" },
      h("h1", { text: "Settings" }),
      h("p", { class: "lead", text: `Providers are kept in ${data.config_path}; keys typed here go to the key store, never into that file.` }),
      h("div", { class: "card" }, h("h2", { text: "Providers" }),
        data.providers.length ? configured : h("p", { class: "lead", text: "No provider yet: add one below, or look for servers on this computer." }),
        data.model ? h("p", { class: "lead", text: `Default model: ${data.model}` }) : null),
      this.addForm(), this.detectCard(), this.integrationsBox = h("div", { class: "card integrations" }),
      this.hooksBox = h("div", { class: "card hooks" }), this.modelsBox));
    this.loadIntegrations();
    this.loadHooks();
    this.loadModels();
  }

  // The person's hooks, read-only (they are edited in the config file; see `totem hooks`).
  async loadHooks() {
    const { hooks, ignored } = await api("/api/settings/hooks");
    const rows = h("tbody", {}, hooks.map((k) => h("tr", { dataset: { hook: k.event } },
      h("td", { class: "mono", text: k.event }), h("td", { class: "mono", text: k.matcher || "*" }),
      h("td", { class: "mono", text: k.command }), h("td", { text: `${k.timeout} s` }), h("td", { text: k.source }))));
    this.hooksBox.replaceChildren(h("h2", { text: "Hooks" }),
      h("p", { class: "lead", text: "Your commands on the agent's events, from the config files (a project's only once its folder is trusted)." }),
      hooks.length ? h("table", { class: "list" }, h("thead", {}, h("tr", {}, ["Event", "Tools", "Command", "Timeout", "From"].map((t) => h("th", { text: t })))), rows)
        : h("p", { class: "lead", text: "No hooks configured." }),
      ignored.length ? h("p", { class: "lead", text: `Ignored until this folder is trusted: ${ignored.join("; ")}` }) : null);
  }

  // The integrations (slack, tts, image, agent tools, web search): on or off and why; a key
  // typed here goes to the key store, like a provider's.
  async loadIntegrations() {
    const { integrations } = await api("/api/settings/integrations");
    const rows = h("tbody");
    for (const it of integrations) {
      const msg = h("div", { class: "msg" });
      let form = null;
      if (it.takes_key) {
        const key = h("input", { type: "password", name: "key", autocomplete: "off", placeholder: it.key ? `key: ${it.key}` : "key" });
        const url = it.name === "image" ? h("input", { type: "url", name: "base_url", placeholder: "https://api.openai.com/v1" }) : null;
        const backend = it.name === "websearch" ? h("select", { name: "backend" }, h("option", { value: "brave", text: "Brave" }), h("option", { value: "tavily", text: "Tavily" })) : null;
        const save = async () => {
          try {
            const r = await api(`/api/settings/integrations/${it.name}/key`, { method: "POST", body: { key: key.value, base_url: url ? url.value.trim() : "", backend: backend ? backend.value : "" } });
            key.value = "";
            await this.loadIntegrations();
            this.integrationsBox.append(h("div", { class: "msg ok", text: r.message }));
          } catch (err) { msg.className = "msg bad"; msg.textContent = err.message; }
        };
        form = h("form", { class: "row", onsubmit: (e) => { e.preventDefault(); save(); } }, backend, url, key,
          h("button", { type: "submit", class: "small", text: "Save key" }));
      }
      rows.append(h("tr", { dataset: { integration: it.name } },
        h("td", { class: "mono", text: it.name }), h("td", { class: it.on ? "on" : "off", text: it.on ? "on" : "off" }),
        h("td", { text: it.why }), h("td", {}, form, msg)));
    }
    this.integrationsBox.replaceChildren(h("h2", { text: "Integrations" }),
      h("p", { class: "lead", text: "Each tool is off until configured (see `totem tools`); keys typed here go to the key store." }),
      h("table", { class: "list" }, h("thead", {}, h("tr", {}, ["Tool", "State", "Why", ""].map((t) => h("th", { text: t })))), rows));
  }

  addForm() {
    const select = h("select", { name: "template" });
    const local = h("optgroup", { label: "Servers" });
    const cloud = h("optgroup", { label: "Clouds" });
    for (const t of this.templates) {
      if (t.id === "other") continue;
      (t.local || t.base_url.startsWith("http://") ? local : cloud).append(h("option", { value: t.id, text: t.label }));
    }
    select.append(local, cloud, h("option", { value: "other", text: "Other (any OpenAI-compatible URL)" }));
    const name = h("input", { type: "text", name: "name" });
    const url = h("input", { type: "url", name: "url" });
    const key = h("input", { type: "password", name: "key", autocomplete: "off" });
    const note = h("div", { class: "lead" });
    const msg = h("div", { class: "msg" });
    const fill = () => {
      const t = this.templates.find((x) => x.id === select.value);
      name.placeholder = t.id === "other" ? "my-server" : t.id;
      url.value = t.base_url;
      url.placeholder = t.base_url || "http://host:port/v1";
      key.placeholder = t.needs_key ? `API key${t.key_env ? ` (or leave empty to use $${t.key_env})` : ""}` : "no key needed (optional)";
      note.textContent = t.note || "";
    };
    select.addEventListener("change", fill);
    fill();
    const add = async () => {
      try {
        const r = await api("/api/settings/providers", { method: "POST", body: { template: select.value, name: name.value.trim(), url: url.value.trim(), key: key.value } });
        key.value = "";
        await this.app.refreshModels();
        await this.show();
        this.flash(r.message);
      } catch (err) { msg.className = "msg bad"; msg.textContent = err.message; }
    };
    return h("div", { class: "card" }, h("h2", { text: "Add a provider" }),
      h("form", { class: "form add-provider", onsubmit: (e) => { e.preventDefault(); add(); } },
        h("label", { class: "k", text: "Provider" }), select,
        h("label", { class: "k", text: "Name" }), name,
        h("label", { class: "k", text: "Base URL" }), url,
        h("label", { class: "k", text: "Key" }), key,
        h("div", { class: "full" }, note),
        h("div", { class: "row full" }, h("button", { type: "submit", class: "primary", text: "Add provider" })),
        h("div", { class: "full" }, msg)));
  }

  flash(text) {
    const first = this.root.querySelector(".card");
    if (first) first.append(h("div", { class: "msg ok", text }));
  }

  detectCard() {
    const out = h("div");
    const run = async (button) => {
      button.disabled = true;
      out.replaceChildren(h("p", { class: "lead", text: "Looking on the usual ports…" }));
      try {
        const { found } = await api("/api/settings/detect");
        out.replaceChildren();
        if (!found.length) out.append(h("p", { class: "lead", text: "No model server answered on this computer." }));
        for (const f of found) {
          const models = f.models.length ? ` · ${f.models.slice(0, 5).join(", ")}${f.models.length > 5 ? "…" : ""}` : "";
          out.append(h("div", { class: "row detected" },
            h("span", { class: "mono", text: f.base_url }), h("span", { text: `${f.note}${models}` }),
            h("button", { type: "button", class: "small primary", text: "Add", onclick: async () => {
              try {
                await api("/api/settings/providers", { method: "POST", body: { template: f.name, url: f.base_url } });
                await this.app.refreshModels();
                await this.show();
              } catch (err) { out.append(h("div", { class: "msg bad", text: err.message })); }
            } })));
        }
      } finally { button.disabled = false; }
    };
    const button = h("button", { type: "button", text: "Look for local servers", onclick: (e) => run(e.target) });
    return h("div", { class: "card" }, h("h2", { text: "Servers on this computer" }),
      h("p", { class: "lead", text: "Ollama, LM Studio, llama.cpp, vLLM and LiteLLM on their usual ports." }), button, out);
  }

  async test(name, result) {
    result.className = "msg";
    result.textContent = "Testing…";
    const r = await api(`/api/settings/providers/${encodeURIComponent(name)}/test`, { method: "POST", body: {} });
    result.className = `msg ${r.ok ? "ok" : "bad"}`;
    result.textContent = r.message;
  }

  async remove(name) {
    if (!confirm(`Remove the provider ${name}?`)) return;
    try {
      await api(`/api/settings/providers/${encodeURIComponent(name)}`, { method: "DELETE" });
      await this.app.refreshModels();
      await this.show();
    } catch (err) { alert(err.message); }
  }

  async loadModels(fresh = false) {
    const data = await this.app.refreshModels(fresh);
    const table = h("table", { class: "list models" }, h("thead", {}, h("tr", {},
      ["Provider", "Model", "Context", "Max output", "Tools", "Reasoning", "Vision", "$ / M tokens in / out", "Source"].map((t) => h("th", { text: t })))));
    const body = h("tbody");
    const errors = [];
    for (const group of data.providers) {
      if (group.error) errors.push(`${group.provider}: ${group.error}`);
      for (const m of group.models) {
        body.append(h("tr", {}, h("td", { text: group.provider }), h("td", { class: "mono", text: m.id }),
          h("td", {}, num(m.context_window)), h("td", {}, num(m.max_output)),
          h("td", {}, yesNo(m.tools, m.tools_unreliable)), h("td", {}, yesNo(m.reasoning)), h("td", {}, yesNo(m.vision)),
          h("td", {}, price(m.price)), h("td", { text: m.source })));
      }
    }
    table.append(body);
    this.modelsBox.replaceChildren(h("h2", {}, "Models ", h("button", { type: "button", class: "small", text: "Refresh", onclick: () => this.loadModels(true) })),
      body.children.length ? table : h("p", { class: "lead", text: "No model listed yet." }),
      ...errors.map((e) => h("div", { class: "msg bad", text: e })));
  }
}
