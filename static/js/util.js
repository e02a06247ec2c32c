// Small DOM and fetch helpers shared by the dashboard's modules (no dependencies).

const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content || "";

export async function api(path, method = "GET") {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
  let response;
  try {
    response = await fetch(path, { method, headers, credentials: "same-origin" });
  } catch {
    return { ok: false, status: 0, body: null };
  }
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  return { ok: response.ok, status: response.status, body };
}

export function ago(epochSeconds) {
  if (typeof epochSeconds !== "number") return "at an unknown time";
  const diff = (epochSeconds * 1000 - Date.now()) / 1000;
  const units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400],
    ["hour", 3600], ["minute", 60]];
  for (const [unit, seconds] of units) {
    if (Math.abs(diff) >= seconds) return rtf.format(Math.round(diff / seconds), unit);
  }
  return "just now";
}

export function timeEl(epochSeconds) {
  if (typeof epochSeconds !== "number") return ago(epochSeconds);
  const date = new Date(epochSeconds * 1000);
  return el("time", { datetime: date.toISOString(), title: date.toLocaleString() }, ago(epochSeconds));
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// Server-rendered, sanitized HTML (markdown.py) as nodes; DOMParser runs no scripts.
export function parsed(html) {
  const doc = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  return [...doc.body.childNodes];
}
