// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";

import { shownName } from "../src/pages/bots.js";
import { linkable, profileHash, profilePath } from "../src/pages/profile.js";

test("a profile's address is its username's, or the user id's after a tilde", () => {
  assert.equal(profileHash({ username: "Ann" }), "#/@/Ann");
  assert.equal(profileHash({ username: "Борис" }), "#/@/%D0%91%D0%BE%D1%80%D0%B8%D1%81");
  assert.equal(profileHash({ user: "g_x-Y.1" }), "#/@/~g_x-Y.1");
  assert.equal(profilePath("~g_x-Y.1"), "/api/players/g_x-Y.1/profile");
  assert.equal(profilePath("<b>Ann</b>"), "/api/players/%3Cb%3EAnn%3C%2Fb%3E/profile");
});

test("people are linked, bots and deleted players are not", () => {
  assert.equal(linkable({ user: "g_ann", name: "Ann" }), true);
  assert.equal(linkable({ user: "g_bot", name: "Steady bot", bot: true }), false);
  assert.equal(linkable({ user: "deleted.0123456789abcdef0123", name: "" }), false);
  assert.equal(linkable({ name: "Ann" }), false);
});

test("a deleted player's empty name is worded by the catalog", () => {
  assert.equal(shownName({ name: "" }), "deleted player");
  assert.equal(shownName({ name: "<b>Ann</b>" }), "<b>Ann</b>");
});
