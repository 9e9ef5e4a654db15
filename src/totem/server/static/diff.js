// A unified diff drawn as a diff view: added lines green, removed red, hunks marked; cut past
// a screenful with a count of the lines left out.

import { h } from "./util.js";

const SCREEN = 60;

function kind(line) {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("@@")) return "hunk";
  return "ctx";
}

export function diffView(diff, limit = SCREEN) {
  const lines = diff.replace(/\n$/, "").split("\n");
  const view = h("pre", { class: "diff" });
  for (const line of lines.slice(0, limit)) {
    view.append(h("span", { class: `diff-${kind(line)}`, text: `${line}\n` }));
  }
  if (lines.length > limit) {
    const rest = lines.length - limit;
    view.append(h("span", { class: "diff-more", text: `… ${rest} more line${rest === 1 ? "" : "s"} of the diff` }));
  }
  return view;
}

// "+3 -1": lines added and removed.
export function diffStat(diff) {
  let added = 0, removed = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+") && !line.startsWith("+++")) added += 1;
    else if (line.startsWith("-") && !line.startsWith("---")) removed += 1;
  }
  return `+${added} -${removed}`;
}
