// A small, safe Markdown renderer: every piece of text is escaped; only the tags written here
// are produced; links keep http(s) and mailto only. Unclosed code fences (a streaming answer)
// run to the end. Code is highlighted by a tiny tokenizer.

const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

const KEYWORDS = {
  py: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield match case self",
  js: "async await break case catch class const continue debugger default delete do else export extends false finally for function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly",
  sh: "if then else elif fi for while do done case esac in function return export local echo cd exit set unset source sudo",
  go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  rs: "as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
  c: "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete this true false null template namespace using bool",
  sql: "select from where insert into values update set delete create table drop alter and or not null join left right inner outer on group by order having limit as distinct",
};
const ALIASES = { python: "py", javascript: "js", ts: "js", typescript: "js", jsx: "js", tsx: "js",
  json: "js", bash: "sh", shell: "sh", zsh: "sh", console: "sh", golang: "go", rust: "rs",
  java: "c", cpp: "c", "c++": "c", cs: "c", csharp: "c", h: "c", kotlin: "c", swift: "c" };
const SETS = {};
function keywords(lang) {
  const key = ALIASES[lang] || lang;
  if (!KEYWORDS[key]) return null;
  if (!SETS[key]) SETS[key] = new Set(KEYWORDS[key].split(" "));
  return SETS[key];
}

const STYLE = { py: "hash", sh: "hash", yaml: "hash", yml: "hash", toml: "hash", rb: "hash",
  ruby: "hash", r: "hash", perl: "hash", ini: "hash", conf: "hash", dockerfile: "hash",
  makefile: "hash", sql: "dash", lua: "dash", js: "c", go: "c", rs: "c", c: "c" };
const STRINGS = String.raw`"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|` +
  "`(?:\\\\.|[^`\\\\])*`";
const COMMENTS = { hash: String.raw`#[^\n]*`, dash: String.raw`--[^\n]*`,
  c: String.raw`\/\/[^\n]*|\/\*[\s\S]*?\*\/` };
const REST = String.raw`(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b|\b0x[\da-f]+\b)|([A-Za-z_$][\w$]*)(?=\s*\()|([A-Za-z_$][\w$]*)`;

function pattern(style) {
  return new RegExp(`(${COMMENTS[style] || "(?!)"})|(${STRINGS})|${REST}`, "gi");
}

export function highlight(code, lang) {
  const lower = (lang || "").toLowerCase();
  const key = ALIASES[lower] || lower;
  const words = keywords(lower);
  const style = STYLE[key];
  if (!words && !style) return escapeHtml(code);
  const fold = key === "sql";
  const known = (w) => words && words.has(fold ? w.toLowerCase() : w);
  const re = pattern(style || "none");
  let out = "";
  let last = 0;
  let m;
  while ((m = re.exec(code)) !== null) {
    const [text, comment, str, num, fn, word] = m;
    out += escapeHtml(code.slice(last, m.index));
    last = m.index + text.length;
    let cls = null;
    if (comment) cls = "c";
    else if (str) cls = "s";
    else if (num) cls = "n";
    else if (fn) cls = known(fn) ? "k" : "f";
    else if (word && known(word)) cls = "k";
    out += cls ? `<span class="tok-${cls}">${escapeHtml(text)}</span>` : escapeHtml(text);
  }
  return out + escapeHtml(code.slice(last));
}

function safeUrl(url) {
  const u = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(u) ? u : null;
}

export function inline(text) {
  const codes = [];
  let s = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, __, code) => {
    codes.push(`<code>${escapeHtml(code.trim() ? code.replace(/^ (.*) $/, "$1") : code)}</code>`);
    return `\u0000${codes.length - 1}\u0000`;
  });
  const links = [];
  s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (whole, label, url) => {
    const href = safeUrl(url);
    if (!href) return whole;
    links.push(`<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">` +
      `${escapeHtml(label)}</a>`);
    return `\u0001${links.length - 1}\u0001`;
  });
  s = s.replace(/\bhttps?:\/\/[^\s<>()\u0000\u0001]+[^\s<>().,;:!?'"\u0000\u0001]/g, (url) => {
    links.push(`<a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">` +
      `${escapeHtml(url)}</a>`);
    return `\u0001${links.length - 1}\u0001`;
  });
  s = escapeHtml(s)
    .replace(/\*\*([^*\n]+?)\*\*/g, "<strong>$1</strong>")
    .replace(/__([^_\n]+?)__/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*([^*\s][^*\n]*?)\*(?!\w)/g, "$1<em>$2</em>")
    .replace(/(^|[^_\w])_([^_\s][^_\n]*?)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/~~([^~\n]+)~~/g, "<del>$1</del>");
  return s
    .replace(/\u0001(\d+)\u0001/g, (_, i) => links[+i])
    .replace(/\u0000(\d+)\u0000/g, (_, i) => codes[+i]);
}

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function renderList(lines, start) {
  // a (possibly nested) list from lines[start]; returns [html, next index]
  const first = lines[start].match(LIST_ITEM);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  let html = ordered ? `<ol${+first[2] !== 1 ? ` start="${parseInt(first[2], 10)}"` : ""}>` : "<ul>";
  let i = start;
  while (i < lines.length) {
    const m = lines[i].match(LIST_ITEM);
    if (!m || m[1].length < indent) {
      if (m || !lines[i].trim() || !/^\s{2,}/.test(lines[i])) break;
      html = html.replace(/<\/li>$/, ` ${inline(lines[i].trim())}</li>`); // continuation
      i++;
      continue;
    }
    if (m[1].length === indent && /\d/.test(m[2]) !== ordered) break;
    if (m[1].length > indent) {
      const [sub, next] = renderList(lines, i);
      html = html.replace(/<\/li>$/, `${sub}</li>`);
      i = next;
      continue;
    }
    let body = m[3];
    const task = body.match(/^\[([ xX])\]\s+(.*)$/);
    if (task) body = `${task[1] === " " ? "☐" : "☑"} ${task[2]}`;
    html += `<li>${inline(body)}</li>`;
    i++;
  }
  return [html + (ordered ? "</ol>" : "</ul>"), i];
}

export function renderMarkdown(src) {
  const lines = String(src).replace(/\r\n?/g, "\n").split("\n");
  let html = "";
  let para = [];
  const flush = () => {
    if (para.length) html += `<p>${para.map(inline).join("<br>")}</p>`;
    para = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+#.-]*)/);
    if (fence) {
      flush();
      const code = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) code.push(lines[i++]);
      i++;
      const lang = fence[2] || "";
      const label = lang ? `<span class="lang">${escapeHtml(lang)}</span>` : "";
      const copy = '<button type="button" class="copy" aria-label="Copy the code" title="Copy the code"></button>';
      html += `<pre>${label}${copy}<code>${highlight(code.join("\n"), lang)}</code></pre>`;
      continue;
    }
    if (!line.trim()) { flush(); i++; continue; }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      flush();
      html += `<h${heading[1].length}>${inline(heading[2])}</h${heading[1].length}>`;
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); html += "<hr>"; i++; continue; }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*> ?/, ""));
      html += `<blockquote>${renderMarkdown(quoted.join("\n"))}</blockquote>`;
      continue;
    }
    if (LIST_ITEM.test(line) && (para.length === 0 || !/^\s/.test(line))) {
      flush();
      const [list, next] = renderList(lines, i);
      html += list;
      i = next;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      flush();
      const head = cells(line);
      html += "<table><thead><tr>" + head.map((c) => `<th>${inline(c)}</th>`).join("") +
        "</tr></thead><tbody>";
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
        html += "<tr>" + cells(lines[i]).map((c) => `<td>${inline(c)}</td>`).join("") + "</tr>";
        i++;
      }
      html += "</tbody></table>";
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return html;
}
