// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import "./english.js";

import { browserName, fromBase64url, publicKeyOptions, toBase64url } from "../src/pages/account.js";

test("base64url text and bytes convert both ways, without padding", () => {
  for (const length of [0, 1, 2, 3, 4, 31, 32, 33]) {
    const bytes = Uint8Array.from({ length }, (_, i) => (i * 97 + 251) % 256);
    const text = toBase64url(bytes);
    assert.doesNotMatch(text, /[+/=]/);
    assert.deepEqual(fromBase64url(text), bytes);
  }
  assert.equal(toBase64url(new Uint8Array([251, 255])), "-_8");
  assert.equal(toBase64url(new Uint8Array([1, 2, 3, 4]).buffer), "AQIDBA");
});

test("the server's options become what navigator.credentials takes", () => {
  const creation = publicKeyOptions(
    JSON.stringify({
      rp: { name: "Klondike Live", id: "localhost" },
      user: { id: "Z19hYmM", name: "Ann", displayName: "Ann" },
      challenge: "AQID",
      excludeCredentials: [{ id: "BAUG", type: "public-key" }],
    }),
  );
  assert.deepEqual(creation.challenge, new Uint8Array([1, 2, 3]));
  assert.equal(new TextDecoder().decode(creation.user.id), "g_abc");
  assert.deepEqual(creation.excludeCredentials[0].id, new Uint8Array([4, 5, 6]));
  assert.equal(creation.rp.id, "localhost");
  const request = publicKeyOptions(
    JSON.stringify({ rpId: "localhost", challenge: "AQID", allowCredentials: [] }),
  );
  assert.deepEqual(request.challenge, new Uint8Array([1, 2, 3]));
  assert.deepEqual(request.allowCredentials, []);
});

test("a device is named by its browser and system", () => {
  const chrome =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  assert.equal(browserName(chrome), "Chrome · Linux");
  assert.equal(
    browserName(
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Safari/604.1",
    ),
    "Safari · iOS",
  );
  assert.equal(
    browserName("Mozilla/5.0 (Windows NT 10.0; rv:140.0) Gecko/20100101 Firefox/140.0"),
    "Firefox · Windows",
  );
  assert.equal(browserName("curl/8.5"), "curl/8.5");
  assert.equal(browserName(""), "Unknown browser");
});
