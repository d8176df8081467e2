// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  LOCALES,
  detectLocale,
  flatten,
  formatList,
  formatNumber,
  formatRelative,
  has,
  locale,
  onLocaleChange,
  setLocale,
  t,
  useCatalog,
} from "../src/i18n.js";
import { cardName } from "../src/cards.js";

/** @param {string} code */
const catalog = (code) =>
  JSON.parse(readFileSync(new URL(`../locales/${code}.json`, import.meta.url), "utf8"));

for (const { code } of LOCALES) useCatalog(code, catalog(code));

/** setLocale without fetching or storing (every catalog is in already). */
const nowhere = {
  storage: null,
  get: /** @type {typeof fetch} */ (() => Promise.reject(new Error("no fetch"))),
};

test("detectLocale: ?lang= wins, then the stored choice, then the browser's languages, else English", () => {
  assert.equal(detectLocale(["fr-FR"], "es", "eu"), "eu");
  assert.equal(detectLocale(["fr-FR"], "es", "EU-es"), "eu");
  assert.equal(detectLocale(["fr-FR"], "es", "xx"), "es");
  assert.equal(detectLocale(["fr-FR"], "es", null), "es");
  assert.equal(detectLocale(["fr-FR", "en"], null, null), "fr");
  assert.equal(detectLocale(["eu-ES"], "nonsense", null), "eu");
  assert.equal(detectLocale(["de-DE", "es-MX"], null, null), "es");
  assert.equal(detectLocale(["de-DE", "ja"], null, undefined), "en");
  assert.equal(detectLocale([], null, null), "en");
});

test("every language is named in itself", () => {
  assert.deepEqual(
    LOCALES.map((entry) => entry.name),
    ["Euskara", "Español", "Français", "English"],
  );
});

test("t fills placeholders and plurals in the active language, and follows a switch", async () => {
  await setLocale("en", nowhere);
  assert.equal(t("home.race.seats", { n: 1 }), "1 seat");
  assert.equal(t("home.race.seats", { n: 4 }), "4 seats");
  assert.equal(cardName(3), "Four of clubs");
  /** @type {string[]} */
  const seen = [];
  const off = onLocaleChange((code) => seen.push(code));
  await setLocale("eu", nowhere);
  assert.equal(locale(), "eu");
  assert.equal(t("home.race.seats", { n: 4 }), "4 eserleku");
  assert.equal(cardName(12 + 26), "Bihotzetako erregea");
  await setLocale("fr", nowhere);
  assert.equal(cardName(11 + 26), "Dame de cœur");
  assert.equal(t("home.createFailed", { reason: "x" }), "Impossible de créer la partie\u00a0: x");
  off();
  await setLocale("es", nowhere);
  assert.deepEqual(seen, ["eu", "fr"]);
  assert.equal(cardName(3 + 13), "Cuatro de diamantes");
  await setLocale("en", nowhere);
});

test("a missing key falls back to English, then to the key itself", async () => {
  useCatalog("fr", { ...catalog("fr"), common: {} });
  await setLocale("fr", nowhere);
  assert.equal(t("common.close"), "Close");
  assert.equal(t("no.such.key"), "no.such.key");
  assert.equal(has("no.such.key"), false);
  useCatalog("fr", catalog("fr"));
  assert.equal(t("common.close"), "Fermer");
  await setLocale("en", nowhere);
});

test("setLocale refuses a language the client does not have", async () => {
  await assert.rejects(setLocale("de", nowhere));
});

test("numbers, lists and relative times follow the active language", async () => {
  await setLocale("fr", nowhere);
  assert.equal(formatNumber(1234.5).replace(/\s/g, " "), "1 234,5");
  assert.equal(formatList(["a", "b", "c"]), "a, b et c");
  assert.equal(formatRelative(-3, "minute"), "il y a 3 minutes");
  await setLocale("eu", nowhere);
  assert.equal(formatRelative(-3, "minute"), "duela 3 minutu");
  await setLocale("en", nowhere);
  assert.equal(formatNumber(1234.5), "1,234.5");
});

test("flatten skips translators' notes", () => {
  assert.deepEqual([...flatten({ "@note": "x", a: { "@note": "y", b: "B" } })], [["a.b", "B"]]);
});
