// @ts-check
/**
 * Small DOM and formatting helpers shared by the pages. Text always goes in through
 * `textContent`, never as HTML, so names chosen by other players cannot inject markup.
 */

/**
 * What `h` accepts as a property: an attribute's value (`true`: present; false, null
 * or undefined: absent), a listener for an `on…` key, the entries of `dataset`, or
 * the value of one of the element's own properties (`disabled`, `selected`, …).
 * @typedef {string | number | boolean | null | undefined | ((event: Event) => unknown)
 *   | Record<string, string>} Prop
 */

/**
 * A child of `h`: an element, text, or nothing (null, undefined, false); arrays are flattened.
 * @typedef {Node | string | number | null | undefined | false | Child[]} Child
 */

/**
 * The element `h` makes for a spec: `input.wide` is an HTMLInputElement.
 * @template {string} S
 * @typedef {(S extends `${infer T}.${string}` ? T : S) extends infer T
 *   ? T extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[T] : HTMLElement
 *   : never} ElementOf
 */

/**
 * An element: h("button.ghost", {type: "button", onclick}, "Text", child, ...).
 * @template {string} S
 * @param {S} spec a tag and classes, `tag.class.class` (the tag defaults to div)
 * @param {Record<string, Prop> | null} [props]
 * @param {...Child} children
 * @returns {ElementOf<S>}
 */
export function h(spec, props = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const node = document.createElement(tag || "div");
  if (classes.length) node.className = classes.join(" ");
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "dataset" && typeof value === "object") Object.assign(node.dataset, value);
    else if (key in node && typeof value !== "string") Reflect.set(node, key, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  // createElement made the element of the spec's tag.
  return /** @type {ElementOf<S>} */ (node);
}

/**
 * "1:05.3" style time from milliseconds (tenths shown when asked).
 * @param {number | null | undefined} ms
 */
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

/** @type {Record<string, string>} */
const STATUS_WORDS = { playing: "playing", won: "won", resigned: "resigned", timeout: "out of time" };

/**
 * Words for a board's status.
 * @param {string} status
 */
export function statusWord(status) {
  return STATUS_WORDS[status] ?? status;
}

/**
 * Say something to screen readers through the page's live region.
 * @param {string} text
 */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A fresh text node after a tick makes screen readers speak repeated messages too.
  setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/**
 * A stat block: small caption over a value; returns [node, setValue].
 * @param {string} caption
 * @param {string} testid
 * @returns {[HTMLElement, (text: string) => void]}
 */
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
 * The control named `name` of a form the page built (an Error when there is none).
 * @template {object} T
 * @param {HTMLFormElement} form
 * @param {string} name
 * @param {{new (): T, prototype: T}} type HTMLInputElement, HTMLSelectElement, RadioNodeList, …
 * @returns {T}
 */
export function control(form, name, type) {
  const item = form.elements.namedItem(name);
  if (!(item instanceof type)) throw new Error(`the form has no ${name}`);
  return item;
}

/**
 * Words for something thrown: an Error's message.
 * @param {unknown} error
 */
export function errorText(error) {
  return error instanceof Error ? error.message : String(error);
}

/** An Error with the HTTP status of a failed request. */
export class HttpError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   */
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/**
 * Fetch JSON from the server with this browser's token (some answers depend on who
 * asks: your daily attempt, replays behind the spoiler gate); null on 404. Other
 * failures throw an HttpError.
 *
 * The answer is whatever the server sent: callers name its type (wire.js), trusting
 * the server as they do its frames.
 * @param {string} path
 * @returns {Promise<unknown>}
 */
export async function getJSON(path) {
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  const token = localStorage.getItem("klondike.token");
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { headers });
  if (response.status === 404) return null;
  if (!response.ok) {
    throw new HttpError(
      response.status === 403 ? "not yet: finish your own attempt first" : `${path}: ${response.status}`,
      response.status,
    );
  }
  return response.json();
}
