// @ts-check
/**
 * The English catalog for Node's tests: a test of code that shows text (through `t()`)
 * imports this first, and reads the English words, as the page shows them before any
 * switch (src/i18n.js loads catalogs with fetch, which the tests do not do).
 */
import { readFileSync } from "node:fs";

import { useCatalog } from "../src/i18n.js";

useCatalog("en", JSON.parse(readFileSync(new URL("../locales/en.json", import.meta.url), "utf8")));
