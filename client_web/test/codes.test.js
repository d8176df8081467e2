// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { CODE_ALPHABET, groupedCode, normaliseCode } from "../src/codes.js";

test("the alphabet has twenty letters and no look-alikes", () => {
  assert.equal(new Set(CODE_ALPHABET).size, 20);
  for (const confusable of "0O1IL5S2Z8B") assert.ok(!CODE_ALPHABET.includes(confusable), confusable);
});

test("typed codes are read whatever their case, spaces and dashes", () => {
  for (const typed of [
    "ACDEFG",
    "acdefg",
    "AcD-eFg",
    "  acd efg ",
    "a-c-d e-f-g",
    "ACD\u2013EFG",
    "ACD\u00a0EFG",
  ]) {
    assert.equal(normaliseCode(typed), "ACDEFG", typed);
  }
});

test("text that is no code is refused", () => {
  for (const typed of [
    "",
    "ACDEF",
    "ACDEFGH",
    "ACDEF0",
    "ACDEFO",
    "ACDEFB",
    "ACD_EFG",
    "ACD/EFG",
    `ACDEFG${" ".repeat(40)}`,
  ]) {
    assert.equal(normaliseCode(typed), null, typed);
  }
});

test("a code is shown in two groups that read back as the code", () => {
  assert.equal(groupedCode("HJKMNP"), "HJK-MNP");
  assert.equal(normaliseCode(groupedCode("HJKMNP")), "HJKMNP");
});
