// @ts-check
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

import * as msgpack from "@msgpack/msgpack";

/** The package's own exports (Node gives its CommonJS build, with two extra keys). */
const NAMES = Object.keys(msgpack).filter((name) => name !== "default" && name !== "__esModule");

test("the page's msgpack module is the one-file build, with every name of the package", async () => {
  // What the classic script in index.html does: the one-file build sets MessagePack.
  /** @type {any} */ (globalThis).MessagePack = createRequire(import.meta.url)(
    "@msgpack/msgpack/dist.umd/msgpack.min.js",
  );
  /** @type {Record<string, unknown>} */
  const shim = await import("../src/msgpack.js");
  /** @type {Record<string, unknown>} */
  const own = msgpack;
  assert.deepEqual(Object.keys(shim).sort(), NAMES.sort());
  for (const name of NAMES) assert.equal(typeof shim[name], typeof own[name], name);
  const frame = { t: "move", rid: 7, m: "53", list: [1, 2.5, "x", null, true] };
  const encoded = /** @type {typeof msgpack.encode} */ (shim.encode)(frame);
  assert.deepEqual(msgpack.decode(encoded), frame);
  assert.deepEqual(/** @type {typeof msgpack.decode} */ (shim.decode)(msgpack.encode(frame)), frame);
});
