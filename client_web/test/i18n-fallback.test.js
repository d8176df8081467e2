// @ts-check
/**
 * A browser with no Intl data for the page's language (Debian's Chromium has none for
 * Basque): dates, times, relative times and lists come from the catalog's
 * `common.format` messages, numbers as a language that writes them the same way. Node
 * has the data, so the test takes it away from Basque first.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  LOCALES,
  formatDate,
  formatDateTime,
  formatList,
  formatNumber,
  formatRelative,
  formatTimeOfDay,
  setLocale,
  useCatalog,
} from "../src/i18n.js";

for (const Type of [Intl.DateTimeFormat, Intl.RelativeTimeFormat, Intl.ListFormat, Intl.NumberFormat]) {
  const real = /** @type {(locales: string[]) => string[]} */ (Type.supportedLocalesOf.bind(Type));
  /** @param {string[]} locales */
  const without = (locales) => real(locales).filter((code) => !code.startsWith("eu"));
  Object.defineProperty(Type, "supportedLocalesOf", { value: without });
}

/** @param {string} code */
const catalog = (code) =>
  JSON.parse(readFileSync(new URL(`../locales/${code}.json`, import.meta.url), "utf8"));
for (const { code } of LOCALES) useCatalog(code, catalog(code));
const nowhere = {
  storage: null,
  get: /** @type {typeof fetch} */ (() => Promise.reject(new Error("no fetch in tests"))),
};

const DAY = Date.UTC(2026, 11, 3, 15, 4);

test("Basque without the browser's data: dates and times from the catalog", async () => {
  await setLocale("eu", nowhere);
  assert.equal(formatDate(DAY, { dateStyle: "medium", timeZone: "UTC" }), "2026(e)ko abenduaren 3(a)");
  assert.equal(formatDate(Date.UTC(2027, 0, 9), { timeZone: "UTC" }), "2027(e)ko urtarrilaren 9(a)");
  assert.match(formatTimeOfDay(DAY), /^\d\d:\d\d$/);
  assert.match(formatDateTime(DAY), /^\d{4}\(e\)ko \p{L}+ \d+\(a\), \d\d:\d\d$/u);
});

test("Basque without the browser's data: relative times, lists and numbers", async () => {
  await setLocale("eu", nowhere);
  assert.equal(formatRelative(-3, "hour"), "duela 3 ordu");
  assert.equal(formatRelative(2, "days"), "2 egun barru");
  assert.equal(formatList(["Ane", "Jon", "Miren"]), "Ane, Jon eta Miren");
  assert.equal(formatList(["Ane"]), "Ane");
  assert.equal(formatNumber(4.5), "4,5");
});

test("a language the browser has data for still uses it", async () => {
  await setLocale("fr", nowhere);
  assert.equal(formatDate(DAY, { dateStyle: "long", timeZone: "UTC" }), "3 décembre 2026");
  assert.equal(formatRelative(-3, "hour"), "il y a 3 heures");
  await setLocale("en", nowhere);
});
