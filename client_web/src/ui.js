// @ts-check
/**
 * Small DOM and formatting helpers shared by the pages. Text always goes in through
 * `textContent`, never as HTML, so names chosen by other players cannot inject markup.
 */

import { LOCALES, has, locale, t } from "./i18n.js";

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
 * Replace `root`'s content by what `build` makes (the same page in another language),
 * keeping what the player typed, ticked or chose in its form controls and the focus:
 * the new content has the same structure, so each control and the focused element are
 * found again by their position.
 * @param {HTMLElement} root
 * @param {() => Node} build
 */
export function rerender(root, build) {
  const controls = () =>
    /** @type {NodeListOf<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>} */ (
      root.querySelectorAll("input, select, textarea")
    );
  const saved = [...controls()].map((control) => ({
    name: control.name,
    value: control.value,
    checked: control instanceof HTMLInputElement ? control.checked : false,
  }));
  const all = [...root.getElementsByTagName("*")];
  const focused = document.activeElement instanceof Element ? all.indexOf(document.activeElement) : -1;
  root.replaceChildren(build());
  controls().forEach((control, i) => {
    const was = saved[i];
    if (!was || was.name !== control.name || control.name === "lang") return;
    if (control instanceof HTMLInputElement && (control.type === "checkbox" || control.type === "radio"))
      control.checked = was.checked;
    else control.value = was.value;
  });
  const again = focused >= 0 ? root.getElementsByTagName("*")[focused] : null;
  if (again instanceof HTMLElement) again.focus();
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

/**
 * Words for a board's status (`common.status.*`: playing, won, resigned, timeout).
 * @param {string} status
 */
export function statusWord(status) {
  return has(`common.status.${status}`) ? t(`common.status.${status}`) : status;
}

/**
 * Fill a `<select>` with the languages, each named in itself (and marked with its
 * `lang`), the active one selected.
 * @param {HTMLSelectElement} select
 */
export function fillLanguages(select) {
  select.replaceChildren(
    ...LOCALES.map(({ code, name }) =>
      h("option", { value: code, lang: code, selected: code === locale() }, name),
    ),
  );
  select.value = locale();
  return select;
}

/**
 * The language picker of a page: a labelled `<select>` whose choice switches the page's
 * language (`choose`: the app's `chooseLocale`).
 * @param {(code: string) => unknown} choose
 * @param {string} testid
 */
export function languagePicker(choose, testid) {
  const select = fillLanguages(
    h("select", {
      name: "lang",
      "data-testid": testid,
      onchange: () => choose(select.value),
    }),
  );
  return h("label.row.language-picker", {}, t("common.language"), select);
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
 * Words for something thrown: for a server's refusal, the catalog's message for its code
 * (`errors.<code>`), else the server's own (English) message; else an Error's message.
 * @param {unknown} error
 */
export function errorText(error) {
  const code = error instanceof Error ? /** @type {{code?: unknown}} */ (error).code : undefined;
  if (typeof code === "string" && has(`errors.${code}`)) return t(`errors.${code}`);
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
      response.status === 403 ? t("app.notYet") : `${path}: ${response.status}`,
      response.status,
    );
  }
  return response.json();
}
