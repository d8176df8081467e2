/**
 * Small DOM and formatting helpers shared by the pages. Text always goes in through
 * `textContent`, never as HTML, so names chosen by other players cannot inject markup.
 */

/** An element: h("button.ghost", {type: "button", onclick}, "Text", child, ...). */
export function h(spec, props = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const node = document.createElement(tag || "div");
  if (classes.length) node.className = classes.join(" ");
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** "1:05.3" style time from milliseconds (tenths shown when asked). */
export function formatTime(ms, { tenths = false } = {}) {
  if (ms === null || ms === undefined || ms < 0) return "–";
  const total = Math.floor(ms / 100);
  const seconds = Math.floor(total / 10);
  const minutes = Math.floor(seconds / 60);
  const rest = String(seconds % 60).padStart(2, "0");
  const base =
    minutes >= 60
      ? `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, "0")}:${rest}`
      : `${minutes}:${rest}`;
  return tenths ? `${base}.${total % 10}` : base;
}

const STATUS_WORDS = { playing: "playing", won: "won", resigned: "resigned", timeout: "out of time" };

export function statusWord(status) {
  return STATUS_WORDS[status] ?? status;
}

/** Say something to screen readers through the page's live region. */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A fresh text node after a tick makes screen readers speak repeated messages too.
  setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/** A stat block: small caption over a value; returns [node, setValue]. */
export function stat(caption, testid) {
  const value = h("strong", { "data-testid": testid }, "–");
  const node = h("div.stat", {}, h("small", {}, caption), value);
  return [
    node,
    (text) => {
      value.textContent = text;
    },
  ];
}

/**
 * Fetch JSON from the server with this browser's token (some answers depend on who
 * asks: your daily attempt, replays behind the spoiler gate); null on 404. Other
 * failures throw an Error whose `status` is the HTTP status.
 */
export async function getJSON(path) {
  const headers = { Accept: "application/json" };
  const token = localStorage.getItem("klondike.token");
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { headers });
  if (response.status === 404) return null;
  if (!response.ok) {
    const error = new Error(
      response.status === 403 ? "not yet: finish your own attempt first" : `${path}: ${response.status}`,
    );
    error.status = response.status;
    throw error;
  }
  return response.json();
}
