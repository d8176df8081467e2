// @ts-check
/**
 * The player's language: the message catalogs (`client_web/locales/<code>.json`, one per
 * locale, nested by namespace: `home.solo.title`), ICU messages formatted with
 * `intl-messageformat`, and numbers, dates and relative times through `Intl` for the
 * active locale. docs/client.md, *Languages*.
 *
 *     t("home.unfinished.moves", { n: 3 })   → "3 moves" / "3 mugimendu"
 *
 * A key missing from the active locale falls back to English, then to the key itself,
 * with one console warning per key. `start()` (main.js, before the first render) picks
 * the language (`detectLocale`) and loads its catalog and English; `setLocale()` switches,
 * stores the choice and tells `onLocaleChange` listeners, which draw their text again.
 *
 * Nothing here runs at import time, so Node's tests import it too (`useCatalog` gives
 * them catalogs without fetching).
 */

import { IntlMessageFormat } from "intl-messageformat";

/** @import { PrimitiveType } from "intl-messageformat" */

/**
 * A catalog as its file holds it: messages nested by namespace.
 * @typedef {{[key: string]: string | Catalog}} Catalog
 */

/**
 * The values a message's placeholders take.
 * @typedef {Record<string, PrimitiveType>} Values
 */

/**
 * The languages offered, each named in itself (the picker's order). Adding one: its
 * catalog in client_web/locales/ and a line here.
 * @type {readonly {code: string, name: string}[]}
 */
export const LOCALES = Object.freeze([
  { code: "eu", name: "Euskara" },
  { code: "es", name: "Español" },
  { code: "fr", name: "Français" },
  { code: "en", name: "English" },
]);

/** The language every other falls back to, and whose catalog has every key. */
export const FALLBACK = "en";

/** Where the player's choice is kept (localStorage). */
export const STORAGE_KEY = "klondike.lang";

/** Tags a rich message may use (`tParts`, `translateDom`): an element of that name each. */
const RICH_TAGS = new Set(["em", "strong", "kbd", "code"]);

let active = FALLBACK;
/** @type {Map<string, Map<string, string>>} each locale's messages by full key */
const catalogs = new Map();
/** @type {Map<string, IntlMessageFormat | null>} compiled messages by `locale\0key` */
const compiled = new Map();
/** @type {Set<string>} keys already warned about */
const warned = new Set();
/** @type {Set<(code: string) => void>} */
const listeners = new Set();
/** @type {Map<string, Promise<void>>} catalogs being fetched */
const loading = new Map();

/**
 * Whether `code` is one of LOCALES.
 * @param {string | null | undefined} code
 * @returns {code is string}
 */
export function isLocale(code) {
  return LOCALES.some((entry) => entry.code === code);
}

/**
 * The language to open in (pure): `urlLang` (a `?lang=xx` link) when it is one of
 * LOCALES, else the stored choice, else the first of the browser's languages whose
 * primary subtag is one of LOCALES (eu-ES → eu), else English.
 * @param {readonly string[]} navigatorLanguages
 * @param {string | null | undefined} stored
 * @param {string | null | undefined} urlLang
 * @returns {string}
 */
export function detectLocale(navigatorLanguages, stored, urlLang) {
  const primary = (/** @type {string | null | undefined} */ tag) =>
    String(tag ?? "")
      .trim()
      .toLowerCase()
      .split(/[-_]/)[0];
  if (isLocale(primary(urlLang))) return primary(urlLang);
  if (isLocale(stored)) return stored;
  for (const tag of navigatorLanguages) if (isLocale(primary(tag))) return primary(tag);
  return FALLBACK;
}

/**
 * A catalog's messages by full key (`home.solo.title`).
 * @param {Catalog} tree
 * @param {string} [prefix]
 * @param {Map<string, string>} [into]
 * @returns {Map<string, string>}
 */
export function flatten(tree, prefix = "", into = new Map()) {
  for (const [key, value] of Object.entries(tree)) {
    if (key.startsWith("@")) continue; // notes for translators
    const full = prefix ? `${prefix}.${key}` : key;
    if (typeof value === "string") into.set(full, value);
    else flatten(value, full, into);
  }
  return into;
}

/**
 * Take `tree` as the catalog of `code` (replacing one loaded before).
 * @param {string} code
 * @param {Catalog} tree
 */
export function useCatalog(code, tree) {
  catalogs.set(code, flatten(tree));
  for (const key of [...compiled.keys()]) if (key.startsWith(`${code}\0`)) compiled.delete(key);
}

/**
 * Fetch a locale's catalog (once): from `locales/<code>.json` beside src/, under the
 * same versioned prefix as this module when the server serves one.
 * @param {string} code
 * @param {typeof fetch} [get]
 */
export function loadCatalog(code, get = fetch) {
  if (catalogs.has(code)) return Promise.resolve();
  let pending = loading.get(code);
  if (!pending) {
    const url = new URL(`../locales/${code}.json`, import.meta.url);
    pending = get(url)
      .then((response) => {
        if (!response.ok) throw new Error(`${url.pathname}: ${response.status}`);
        return response.json();
      })
      .then((tree) => useCatalog(code, tree))
      .finally(() => loading.delete(code));
    loading.set(code, pending);
  }
  return pending;
}

/** The active locale's code. */
export function locale() {
  return active;
}

/**
 * Switch to `code` (one of LOCALES): its catalog loaded, the choice stored, `<html lang>`
 * set, then every `onLocaleChange` listener called. Resolves once done.
 * @param {string} code
 * @param {{storage?: Storage | null, get?: typeof fetch}} [options]
 */
export async function setLocale(code, { storage = globalThis.localStorage ?? null, get } = {}) {
  if (!isLocale(code)) throw new Error(`not a language of this client: ${code}`);
  await Promise.all([loadCatalog(FALLBACK, get), loadCatalog(code, get)]);
  try {
    storage?.setItem(STORAGE_KEY, code);
  } catch {
    // Storage refused (private mode, quota): the choice lasts for this page only.
  }
  const changed = code !== active;
  active = code;
  if (globalThis.document) document.documentElement.lang = code;
  if (changed) for (const listener of [...listeners]) listener(code);
}

/**
 * Call `listener` with the new code after every switch; returns its removal.
 * @param {(code: string) => void} listener
 */
export function onLocaleChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Pick the page's language and load its catalogs, before the first render: a `?lang=xx`
 * in the address wins (stored, and taken out of the address so that a later choice
 * survives a reload), then the stored choice, then the browser's languages.
 * @param {{location?: Location, languages?: readonly string[], storage?: Storage | null, get?: typeof fetch}} [options]
 */
export async function start({
  location = window.location,
  languages = navigator.languages ?? [navigator.language],
  storage = window.localStorage,
  get,
} = {}) {
  const params = new URLSearchParams(location.search);
  const urlLang = params.get("lang");
  /** @type {string | null} */
  let stored;
  try {
    stored = storage?.getItem(STORAGE_KEY) ?? null;
  } catch {
    stored = null;
  }
  const code = detectLocale(languages, stored, urlLang);
  if (urlLang !== null) {
    params.delete("lang");
    const search = params.toString();
    window.history.replaceState(
      window.history.state,
      "",
      `${location.pathname}${search ? `?${search}` : ""}${location.hash}`,
    );
  }
  try {
    await setLocale(code, { storage: urlLang !== null || stored !== null ? storage : null, get });
  } catch (error) {
    // A catalog that cannot be fetched: English, or the keys themselves, rather than no page.
    console.warn("klondike: language", code, error);
    await setLocale(FALLBACK, { storage: null, get }).catch(() => undefined);
  }
}

/**
 * A message compiled for a locale, or null when that catalog lacks the key (or the
 * message does not parse: warned once).
 * @param {string} code
 * @param {string} key
 */
function message(code, key) {
  const id = `${code}\0${key}`;
  let format = compiled.get(id);
  if (format === undefined) {
    const text = catalogs.get(code)?.get(key);
    format = null;
    if (text !== undefined) {
      try {
        format = new IntlMessageFormat(text, code, undefined, { ignoreTag: false });
      } catch (error) {
        warnOnce(`${code}:${key}`, `klondike: message ${key} (${code}) does not parse`, error);
      }
    }
    compiled.set(id, format);
  }
  return format;
}

/**
 * @param {string} id
 * @param {...unknown} args
 */
function warnOnce(id, ...args) {
  if (warned.has(id)) return;
  warned.add(id);
  console.warn(...args);
}

/**
 * Whether the active locale or English has `key`.
 * @param {string} key
 */
export function has(key) {
  return Boolean(catalogs.get(active)?.has(key) || catalogs.get(FALLBACK)?.has(key));
}

/**
 * The message `key` in the active language with its placeholders filled: English when
 * the active catalog lacks it, the key itself when English does too (warned once).
 * @param {string} key
 * @param {Values} [values]
 * @returns {string}
 */
export function t(key, values) {
  const parts = tParts(key, values);
  return parts.map((part) => (typeof part === "string" ? part : (part.textContent ?? ""))).join("");
}

/**
 * The message `key` as text and elements: its tags (`<em>…</em>`, `<kbd>`, `<strong>`,
 * `<code>`) become elements of that name holding their text; other tags come from
 * `values` (functions of their chunks).
 * @param {string} key
 * @param {Record<string, PrimitiveType | Node | ((chunks: (string | Node)[]) => Node | string)>} [values]
 * @returns {(string | Node)[]}
 */
export function tParts(key, values = {}) {
  for (const code of active === FALLBACK ? [FALLBACK] : [active, FALLBACK]) {
    const format = message(code, key);
    if (!format) continue;
    if (code !== active) warnOnce(`${active}:${key}`, `klondike: ${key} is missing from ${active}.json`);
    /** @type {Record<string, any>} */
    const all = { ...values };
    for (const tag of RICH_TAGS) {
      all[tag] ??= (/** @type {(string | Node)[]} */ chunks) => {
        if (!globalThis.document) return chunks.join("");
        const node = document.createElement(tag);
        node.append(...chunks);
        return node;
      };
    }
    try {
      const out = format.format(all);
      return (Array.isArray(out) ? out : [out]).map((part) =>
        typeof part === "string" || (globalThis.Node && part instanceof Node) ? part : String(part),
      );
    } catch (error) {
      warnOnce(`${code}:${key}:format`, `klondike: message ${key} (${code}) failed`, error);
    }
  }
  warnOnce(`?:${key}`, `klondike: no message ${key}`);
  return [key];
}

// ------------------------------------------------------------ formatters (Intl)

/** @type {Map<string, any>} */
const formatters = new Map();

/**
 * An Intl formatter for the active locale, made once per locale and options.
 * @template T
 * @param {new (locale: string, options?: any) => T} Type
 * @param {object} [options]
 * @returns {T}
 */
function formatter(Type, options = {}) {
  const id = `${Type.name}\0${active}\0${JSON.stringify(options)}`;
  let made = formatters.get(id);
  if (!made) {
    made = new Type(active, options);
    formatters.set(id, made);
  }
  return made;
}

/** @type {Map<string, boolean>} */
const supported = new Map();

/**
 * Whether this browser has `Type`'s data for the active locale. Some builds of Chromium
 * have none for Basque: dates, relative times and lists then come from the catalog
 * (`common.format`), numbers from a language that writes them the same way.
 * @param {{name: string, supportedLocalesOf(locales: string[]): string[]}} Type
 */
function hasData(Type) {
  const id = `${Type.name}\0${active}`;
  let known = supported.get(id);
  if (known === undefined) {
    known = Type.supportedLocalesOf([active]).length > 0;
    supported.set(id, known);
  }
  return known;
}

/** Where the browser has no number data: a language that writes numbers the same way. */
const NUMBERS_LIKE = /** @type {Record<string, string>} */ ({ eu: "es" });

/**
 * A number as the active locale writes it (1 234,5 in French).
 * @param {number} value
 * @param {Intl.NumberFormatOptions} [options]
 */
export function formatNumber(value, options) {
  if (hasData(Intl.NumberFormat)) return formatter(Intl.NumberFormat, options).format(value);
  const like = NUMBERS_LIKE[active] ?? FALLBACK;
  return new Intl.NumberFormat(like, options).format(value);
}

/**
 * The calendar date and the time of day of `value` as numbers, in `timeZone` (the
 * page's own by default): what the catalog's date messages are filled with.
 * @param {Date | number} value
 * @param {string | undefined} timeZone
 */
function dateFields(value, timeZone) {
  const parts = new Intl.DateTimeFormat("en-GB", {
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone,
  }).formatToParts(value);
  /** @type {Record<string, string>} */
  const field = {};
  for (const part of parts) field[part.type] = part.value;
  return field;
}

/**
 * A date from the catalog (no Intl data for the language).
 * @param {Date | number} value
 * @param {Intl.DateTimeFormatOptions} options
 */
function catalogDate(value, options) {
  const field = dateFields(value, options.timeZone);
  const date = t("common.format.date", {
    year: field.year,
    month: t(`common.format.month.${Number(field.month)}`),
    day: Number(field.day),
  });
  if (!options.timeStyle) return date;
  const time = `${field.hour}:${field.minute}`;
  return options.dateStyle ? t("common.format.dateTime", { date, time }) : time;
}

/**
 * A date (by default: 3 Dec 2026, in the active locale's words and order).
 * @param {Date | number} value
 * @param {Intl.DateTimeFormatOptions} [options]
 */
export function formatDate(value, options = { dateStyle: "medium" }) {
  if (!hasData(Intl.DateTimeFormat)) return catalogDate(value, options);
  return formatter(Intl.DateTimeFormat, options).format(value);
}

/**
 * A time of day (15:03, or 3:03 PM where that is the custom). A game's clock is not a
 * time of day: ui.js `formatTime` writes it (m:ss, the same in every language).
 * @param {Date | number} value
 */
export function formatTimeOfDay(value) {
  return formatDate(value, { timeStyle: "short" });
}

/**
 * A date and time (3 Dec 2026, 15:03).
 * @param {Date | number} value
 */
export function formatDateTime(value) {
  return formatDate(value, { dateStyle: "medium", timeStyle: "short" });
}

/**
 * A relative time: `formatRelative(-3, "minute")` → "3 minutes ago", "hace 3 minutos".
 * @param {number} value
 * @param {Intl.RelativeTimeFormatUnit} unit
 * @param {Intl.RelativeTimeFormatOptions} [options]
 */
export function formatRelative(value, unit, options = { numeric: "auto" }) {
  if (hasData(Intl.RelativeTimeFormat)) {
    return formatter(Intl.RelativeTimeFormat, options).format(value, unit);
  }
  const single = unit.replace(/s$/, "");
  const when = value < 0 || Object.is(value, -0) ? "past" : "future";
  return t(`common.format.relative.${single}.${when}`, { n: Math.abs(value) });
}

/**
 * Items joined as the active locale lists them ("a, b and c", "a, b eta c").
 * @param {readonly string[]} items
 * @param {Intl.ListFormatOptions} [options]
 */
export function formatList(items, options = { type: "conjunction" }) {
  if (hasData(Intl.ListFormat)) return formatter(Intl.ListFormat, options).format(items);
  if (items.length < 2) return items.join("");
  return t("common.format.list", { first: items.slice(0, -1).join(", "), last: items.at(-1) ?? "" });
}

// ------------------------------------------------------------ static markup

/**
 * Translate the marked elements under `root` (index.html's header and dialogs):
 * `data-i18n="key"` sets the element's content (rich tags become elements),
 * `data-i18n-aria-label`, `data-i18n-title`, `data-i18n-placeholder` and
 * `data-i18n-alt` set those attributes.
 * @param {ParentNode} root
 */
export function translateDom(root) {
  for (const node of root.querySelectorAll("[data-i18n]")) {
    const key = node.getAttribute("data-i18n");
    if (key) node.replaceChildren(...tParts(key));
  }
  for (const attribute of ["aria-label", "title", "placeholder", "alt"]) {
    for (const node of root.querySelectorAll(`[data-i18n-${attribute}]`)) {
      const key = node.getAttribute(`data-i18n-${attribute}`);
      if (key) node.setAttribute(attribute, t(key));
    }
  }
}
