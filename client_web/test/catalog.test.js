// @ts-check
/**
 * The message catalogs (client_web/locales/*.json): every key of English in every
 * language, with the same placeholders; every message parses; every plural has the
 * categories its language needs. The failures name what is missing, so adding a
 * language is: copy en.json, translate, add it to LOCALES (src/i18n.js), run this.
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";

import { TYPE, parse } from "@formatjs/icu-messageformat-parser";

import { FALLBACK, LOCALES, flatten } from "../src/i18n.js";

const FOLDER = new URL("../locales/", import.meta.url);

/** @param {string} code */
function messages(code) {
  return flatten(JSON.parse(readFileSync(new URL(`${code}.json`, FOLDER), "utf8")));
}

/** @typedef {import("@formatjs/icu-messageformat-parser").MessageFormatElement} Element */

/**
 * Every argument name of a message, and every plural's categories, walking its tree.
 * @param {Element[]} elements
 * @param {Set<string>} names
 * @param {Set<string>[]} plurals
 */
function walk(elements, names = new Set(), plurals = []) {
  for (const element of elements) {
    if ("value" in element && element.type !== TYPE.literal && typeof element.value === "string")
      names.add(element.value);
    if (element.type === TYPE.plural) plurals.push(new Set(Object.keys(element.options)));
    if (element.type === TYPE.plural || element.type === TYPE.select)
      for (const option of Object.values(element.options)) walk(option.value, names, plurals);
    if (element.type === TYPE.tag) {
      names.add(`<${element.value}>`);
      walk(element.children, names, plurals);
    }
  }
  return { names, plurals };
}

const english = messages(FALLBACK);

test("there is a catalog for every language of LOCALES, and a language for every catalog", () => {
  const files = readdirSync(FOLDER)
    .filter((name) => name.endsWith(".json"))
    .map((name) => name.slice(0, -".json".length));
  assert.deepEqual(files.sort(), LOCALES.map((entry) => entry.code).sort());
});

for (const { code } of LOCALES) {
  test(`${code}: every English key, the same placeholders, messages that parse, full plurals`, () => {
    const own = messages(code);
    const missing = [...english.keys()].filter((key) => !own.has(key));
    assert.deepEqual(missing, [], `${code}.json lacks these keys`);
    const extra = [...own.keys()].filter((key) => !english.has(key));
    assert.deepEqual(extra, [], `${code}.json has keys English lacks`);
    const needed = new Intl.PluralRules(code).resolvedOptions().pluralCategories;
    for (const [key, text] of own) {
      /** @type {Element[]} */
      let tree;
      try {
        tree = parse(text);
      } catch (error) {
        assert.fail(`${code} ${key} does not parse: ${error}`);
      }
      const mine = walk(tree);
      const theirs = walk(parse(/** @type {string} */ (english.get(key))));
      assert.deepEqual([...mine.names].sort(), [...theirs.names].sort(), `${code} ${key}: placeholders`);
      for (const categories of mine.plurals) {
        for (const category of [...needed, "other"])
          assert.ok(categories.has(category), `${code} ${key}: no plural category "${category}"`);
      }
      // ICU quotes with ': one before {, }, # or < hides what follows. Other languages
      // write the typographic ’ instead.
      assert.doesNotMatch(text, /'[{}#<|]/, `${code} ${key}: an apostrophe that quotes`);
      if (code !== FALLBACK) assert.doesNotMatch(text, /'/, `${code} ${key}: write ’, not '`);
      // French sets a no-break space before : (U+00A0) and a narrow one before ; ! ?
      // (U+202F), so that the mark never starts a line.
      if (code === "fr") {
        assert.doesNotMatch(text, /[ \u202f]:/, `fr ${key}: U+00A0 before ":"`);
        assert.doesNotMatch(text, /[ \u00a0][;!?]/, `fr ${key}: U+202F before ";", "!", "?"`);
      }
    }
  });
}
