// Small helpers: DOM building (text is always set as text), the JSON API, formatting.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) {
    throw new ApiError((data && data.error) || `${response.status} ${response.statusText}`,
      response.status);
  }
  return data;
}

export const fmtInt = (n) => (n === null || n === undefined ? "unknown" : Number(n).toLocaleString("en-US"));

export function fmtTokens(n) {
  if (n === null || n === undefined) return "unknown";
  if (n >= 1e6) return `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}k`;
  return String(n);
}

export function fmtCost(usd) {
  if (usd === null || usd === undefined) return "";
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function fmtWhen(seconds) {
  const diff = Date.now() / 1000 - seconds;
  if (diff < 60) return "just now";
  if (diff < 3600) return `${Math.floor(diff / 60)} min ago`;
  if (diff < 86400) return `${Math.floor(diff / 3600)} h ago`;
  const d = new Date(seconds * 1000);
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
}

export function summarizeInput(input, limit = 120) {
  if (!input) return "";
  let text;
  if (typeof input.command === "string") text = input.command;
  else if (input.path && Object.keys(input).length <= 3) {
    text = [input.path, input.pattern].filter(Boolean).join(" ");
  } else if (typeof input.pattern === "string") text = input.pattern;
  else if (typeof input.url === "string") text = input.url;
  else if (typeof input.agent === "string") text = `${input.agent}: ${input.description || input.prompt || ""}`;
  else if (typeof input.question === "string") text = input.question;
  else if (Array.isArray(input.todos)) {
    const done = input.todos.filter((t) => /done|complete/.test(String(t.status))).length;
    text = `${input.todos.length} tasks, ${done} done`;
  }
  else text = JSON.stringify(input);
  text = text.replace(/\s+/g, " ").trim();
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

const STATUS_ALIASES = { completed: "done", complete: "done", finished: "done",
  "in-progress": "in_progress", "in progress": "in_progress", active: "in_progress",
  todo: "pending", not_started: "pending" };

export function normalTodos(items) {
  return (items || []).map((t) => {
    const status = String(t.status || "pending").toLowerCase();
    return { content: String(t.content || ""), status: STATUS_ALIASES[status] || status };
  });
}
