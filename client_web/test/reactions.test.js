// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";
import { floatsFor, REACTIONS } from "../src/pages/reactions.js";

test("a reactions frame floats each reaction once, the most sent first, up to the room left", () => {
  const counts = { clap: 3, party: 12, fire: 1 };
  assert.deepEqual(
    floatsFor(counts, 10).map(({ id, count }) => [id, count]),
    [
      ["party", 12],
      ["clap", 3],
      ["fire", 1],
    ],
  );
  assert.deepEqual(
    floatsFor(counts, 1).map(({ id }) => id),
    ["party"],
  );
  assert.deepEqual(floatsFor(counts, 0), []);
});

test("ids the client does not know, and counts that are no count, float nothing", () => {
  assert.deepEqual(floatsFor({ boo: 4, wow: 0, sad: 1.5, laugh: -1 }, 10), []);
});

test("six reactions, each drawn by its own emoji", () => {
  assert.deepEqual(
    REACTIONS.map(([id]) => id),
    ["clap", "fire", "wow", "laugh", "sad", "party"],
  );
  assert.equal(new Set(REACTIONS.map(([, emoji]) => emoji)).size, 6);
});
