// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { roomFromInvite } from "../src/pages/home.js";
import { backoffDelay, defaultUrl } from "../src/net.js";

test("reconnection waits grow exponentially, with jitter, up to ten seconds", () => {
  assert.equal(
    backoffDelay(0, () => 0),
    125,
  );
  assert.equal(
    backoffDelay(0, () => 1),
    250,
  );
  assert.equal(
    backoffDelay(3, () => 1),
    2000,
  );
  assert.equal(
    backoffDelay(20, () => 1),
    10_000,
  );
  assert.equal(
    backoffDelay(20, () => 0),
    5000,
  );
});

test("the websocket address follows the page's scheme and host", () => {
  assert.equal(defaultUrl({ protocol: "http:", host: "127.0.0.1:8765" }), "ws://127.0.0.1:8765/ws");
  assert.equal(defaultUrl({ protocol: "https:", host: "cards.example" }), "wss://cards.example/ws");
});

test("invite links and bare room ids both name the room", () => {
  assert.equal(roomFromInvite("http://127.0.0.1:8765/#/room/AbCdEfGh12_-xyz"), "AbCdEfGh12_-xyz");
  assert.equal(roomFromInvite("  AbCdEfGh12345678 "), "AbCdEfGh12345678");
  assert.equal(roomFromInvite("#/watch/AbCdEfGh12345678"), "AbCdEfGh12345678");
  assert.equal(roomFromInvite("short"), null);
  assert.equal(roomFromInvite("http://x/#/room/bad id!"), null);
});
