/**
 * `@msgpack/msgpack` for the page, in one request instead of sixteen: index.html loads the
 * package's one-file build (`dist.umd/msgpack.min.js`, a classic deferred script, which
 * runs before any module does and sets `globalThis.MessagePack`), and its import map points
 * the bare name `@msgpack/msgpack` here. Node (the unit tests) and tsc resolve the package
 * itself. Every name the package exports is exported here
 * (test/msgpack.test.js checks that).
 */

/** @type {typeof import("@msgpack/msgpack")} */
const msgpack = /** @type {any} */ (globalThis).MessagePack;

export const {
  DecodeError,
  Decoder,
  EXT_TIMESTAMP,
  Encoder,
  ExtData,
  ExtensionCodec,
  decode,
  decodeArrayStream,
  decodeAsync,
  decodeMulti,
  decodeMultiStream,
  decodeTimestampExtension,
  decodeTimestampToTimeSpec,
  encode,
  encodeDateToTimeSpec,
  encodeTimeSpecToTimestamp,
  encodeTimestampExtension,
} = msgpack;
