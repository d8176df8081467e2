// @ts-check
/**
 * The connection to a Klondike Live server: msgpack frames over one WebSocket, the
 * `hello` handshake, requests matched by `rid`, and reconnection with backoff.
 *
 * Rooms and boards are not kept here: listeners get every frame, a `hello` event as soon
 * as each (re)connection has sent `hello` (requests may follow at once: the server answers
 * a connection's frames in order, so their replies come after `welcome`; protocol
 * section 2), on which they rejoin with their offsets, and an `open` event on `welcome`.
 */

import { decode, encode } from "@msgpack/msgpack";

/** @import { ClientFrame, ErrorFrame, HelloFrame, PongFrame, Replies, ServerFrame, WelcomeFrame } from "./wire.js" */

/**
 * What each event of a connection hands its listeners.
 * @typedef {object} ConnectionEvents
 * @property {ServerFrame} frame every frame but `welcome`
 * @property {null} hello this socket sent `hello`: requests may go (their replies follow `welcome`)
 * @property {WelcomeFrame} open the server said hello (again, after a reconnection)
 * @property {{code: number, delay: number, wasOnline: boolean}} down the socket closed; a reconnection follows after `delay` ms
 * @property {{code: number, message: string}} final the socket closed for good
 */

/**
 * The handlers of each event.
 * @typedef {{[K in keyof ConnectionEvents]: Set<(value: ConnectionEvents[K]) => void>}} Listeners
 */

/**
 * A request waiting for its reply.
 * @typedef {{resolve: (reply: ServerFrame) => void, reject: (error: Error) => void}} Waiting
 */

export const PROTOCOL_VERSION = 1;

/** The close code of a connection whose account session was ended (signed out). */
export const SIGNED_OUT = 4006;

/** Close codes after which reconnecting would not help (protocol section 9). */
const FINAL_CLOSES = new Map([
  [1008, "The server refused this client's messages."],
  [1009, "A message was too large for the server."],
  [4001, "This room was opened in another window or tab."],
  [4003, "This page is out of date: reload it."],
]);

/**
 * Delay before reconnection attempt `attempt` (0, 1, ...): exponential, capped, jittered.
 * @param {number} attempt
 */
export function backoffDelay(attempt, random = Math.random) {
  const base = Math.min(10_000, 250 * 2 ** attempt);
  return Math.round(base / 2 + (random() * base) / 2);
}

/**
 * The websocket URL of the server that served this page.
 * @param {{protocol: string, host: string}} location
 */
export function defaultUrl(location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

export class ServerError extends Error {
  /** @param {ErrorFrame} frame */
  constructor(frame) {
    super(frame.msg || frame.code);
    this.code = frame.code;
    this.frame = frame;
  }
}

export class Connection {
  /**
   * @param {string} url
   * @param {{name?: string, storage?: Storage | null, WebSocketImpl?: typeof WebSocket, early?: WebSocket | null}} options
   *   `early`: a socket to `url` the page opened before its modules ran, used for the first
   *   connection unless it is closing or closed
   */
  constructor(url, { name = "", storage = null, WebSocketImpl = WebSocket, early = null } = {}) {
    this.url = url;
    this.early = early;
    this.name = name;
    this.storage = storage;
    this.WebSocketImpl = WebSocketImpl;
    /** @type {Listeners} */
    this.listeners = {
      frame: new Set(),
      hello: new Set(),
      open: new Set(),
      down: new Set(),
      final: new Set(),
    };
    /** @type {Map<number, Waiting>} */
    this.requests = new Map();
    this.nextRid = 1;
    /** @type {WebSocket | null} */
    this.socket = null;
    this.attempt = 0;
    this.closed = false;
    this.online = false;
    /** Whether this socket has sent `hello`: requests may be pipelined after it. */
    this.greeted = false;
    /** Whether the socket is closing to say hello again with another token (`adopt`). */
    this.switching = false;
    /** @type {string | null} */
    this.user = null;
    /** The signed-in account's username (`welcome`), null for a guest. */
    /** @type {string | null} */
    this.username = null;
    this.clockOffset = 0;
    this.sentAt = 0;
    /** @type {number | undefined} */
    this.timer = undefined;
  }

  /**
   * Register `handler` for `event` ("frame", "hello", "open", "down", "final"); returns its removal.
   * @template {keyof ConnectionEvents} K
   * @param {K} event
   * @param {(value: ConnectionEvents[K]) => void} handler
   */
  on(event, handler) {
    this.listeners[event].add(handler);
    return () => this.listeners[event].delete(handler);
  }

  /**
   * @template {keyof ConnectionEvents} K
   * @param {K} event
   * @param {ConnectionEvents[K]} value
   */
  emit(event, value) {
    for (const handler of [...this.listeners[event]]) handler(value);
  }

  /** Server time now, in ms, as estimated from `welcome` and `pong`. */
  now() {
    return Date.now() + this.clockOffset;
  }

  get token() {
    return this.storage?.getItem("klondike.token") ?? null;
  }

  start() {
    this.closed = false;
    this.open();
    return this;
  }

  open() {
    const early = this.early;
    this.early = null;
    const socket = early && early.readyState <= 1 ? early : new this.WebSocketImpl(this.url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onopen = () => this.greet(socket);
    socket.onmessage = (event) => this.receive(event.data);
    socket.onclose = (event) => this.lost(socket, event.code);
    if (socket.readyState === 1) this.greet(socket); // an early socket, open already
  }

  /**
   * Say hello on a socket just open; requests may follow at once.
   * @param {WebSocket} socket
   */
  greet(socket) {
    /** @type {HelloFrame} */
    const hello = { t: "hello", v: PROTOCOL_VERSION };
    if (this.token) hello.token = this.token;
    if (this.name) hello.name = this.name;
    this.sentAt = Date.now();
    socket.send(encode(hello));
    this.greeted = true;
    this.emit("hello", null);
  }

  /** @param {ArrayBuffer | string} data a message's data (binary frames come as ArrayBuffer) */
  receive(data) {
    if (typeof data === "string") return;
    let decoded;
    try {
      decoded = decode(new Uint8Array(data));
    } catch {
      return;
    }
    if (decoded === null || typeof decoded !== "object") return;
    const frame = /** @type {ServerFrame} */ (decoded);
    if (frame.t === "welcome") {
      // The name is stored only once the player chose it (`rename`): a guest's stays in
      // its token, and an empty `klondike.name` means no name was ever chosen.
      this.user = frame.user;
      this.username = frame.username ?? null;
      this.name = frame.name;
      this.storage?.setItem("klondike.token", frame.token);
      this.clockOffset = frame.now - Math.round((this.sentAt + Date.now()) / 2);
      this.attempt = 0;
      this.online = true;
      this.emit("open", frame);
      this.request({ t: "ping" }).then(
        (pong) => this.syncClock(pong),
        () => {},
      );
      return;
    }
    if (frame.t === "renamed") {
      // The name as the server shows it, sent again in every later `hello`.
      this.name = frame.name;
      this.storage?.setItem("klondike.name", frame.name);
    }
    const rid = "rid" in frame ? frame.rid : undefined;
    const waiting = rid === undefined ? undefined : this.requests.get(rid);
    if (rid !== undefined && waiting) {
      this.requests.delete(rid);
      if (frame.t === "error") waiting.reject(new ServerError(frame));
      else waiting.resolve(frame);
    }
    if (
      frame.t === "error" &&
      (frame.code === "token_invalid" || frame.code === "token_expired" || frame.code === "token_revoked")
    ) {
      // The token is refused (a session ended, a guest made an account elsewhere):
      // forget it, and come back as a new guest.
      this.storage?.removeItem("klondike.token");
    }
    this.emit("frame", frame);
  }

  /** @param {PongFrame & {sentAt?: number}} pong */
  syncClock(pong) {
    const sent = pong.sentAt;
    if (sent === undefined) return;
    this.clockOffset = pong.now - Math.round((sent + Date.now()) / 2);
  }

  /**
   * @param {WebSocket} socket
   * @param {number} code
   */
  lost(socket, code) {
    if (socket !== this.socket) return;
    this.socket = null;
    const wasOnline = this.online;
    this.online = false;
    this.greeted = false;
    for (const { reject } of this.requests.values()) reject(new Error("disconnected"));
    this.requests.clear();
    if (this.closed) return;
    if (code === SIGNED_OUT || this.switching) {
      // Signed out (here or on another device), or a new token to say hello with: at once.
      if (code === SIGNED_OUT && !this.switching) this.storage?.removeItem("klondike.token");
      this.switching = false;
      this.open();
      return;
    }
    const message = FINAL_CLOSES.get(code);
    if (message !== undefined) {
      this.closed = true;
      this.emit("final", { code, message });
      return;
    }
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    this.emit("down", { code, delay, wasOnline });
    this.timer = window.setTimeout(() => this.open(), delay);
  }

  /**
   * Take `name` from now on: in every later `hello` and, when connected, at once
   * (`rename`: the seats of this connection's rooms follow). Resolves with the name as
   * the server shows it (the name itself when offline: the next `hello` carries it);
   * rejects with the server's refusal (`bad_name`, `rate_limited`, ...).
   * @param {string} name
   * @returns {Promise<string>}
   */
  async rename(name) {
    if (this.greeted) {
      try {
        return (await this.request({ t: "rename", name })).name; // `renamed` keeps it
      } catch (error) {
        if (error instanceof ServerError) throw error; // refused: the name stays
      }
    }
    // Offline: the next `hello` says it.
    this.name = name;
    this.storage?.setItem("klondike.name", name);
    return name;
  }

  /**
   * Say hello again with `token` (a new account session's, from `signed_in`), or as a
   * new guest (null): the socket closes and a new one opens at once; pages rejoin their
   * rooms on its `hello` as after any reconnection.
   * @param {string | null} token
   */
  adopt(token) {
    if (token === null) this.storage?.removeItem("klondike.token");
    else this.storage?.setItem("klondike.token", token);
    // The name chosen on this device, if any; else the account's (its token's).
    this.name = this.storage?.getItem("klondike.name") ?? "";
    if (!this.socket) {
      this.retryNow();
      return;
    }
    this.switching = true;
    this.socket.close(1000);
  }

  /** Reconnect now instead of waiting for the backoff timer. */
  retryNow() {
    if (this.socket || this.closed) return;
    window.clearTimeout(this.timer);
    this.open();
  }

  /** @param {ClientFrame & {rid?: number}} frame */
  transmit(frame) {
    if (!this.socket || this.socket.readyState !== 1 || !this.greeted) return false;
    this.socket.send(encode(frame));
    return true;
  }

  /**
   * Send a frame once connected; returns false when offline (the caller resends on `open`).
   * @param {ClientFrame} frame
   */
  send(frame) {
    return this.online && this.transmit(frame);
  }

  /**
   * Send a frame with a fresh `rid` (at once after `hello`: no need to wait for `welcome`);
   * resolves with the reply, rejects on `error` or when the socket closes first.
   * @template {keyof Replies} T
   * @param {ClientFrame & {t: T}} frame
   * @returns {Promise<Replies[T] & {sentAt: number}>}
   */
  request(frame) {
    const rid = this.nextRid++;
    return new Promise((resolve, reject) => {
      if (!this.transmit({ ...frame, rid })) {
        reject(new Error("disconnected"));
        return;
      }
      const sentAt = Date.now();
      this.requests.set(rid, {
        // The reply to a request of type T is a Replies[T] (protocol section 5).
        resolve: (reply) => resolve(Object.assign(/** @type {Replies[T]} */ (reply), { sentAt })),
        reject,
      });
    });
  }

  close() {
    this.closed = true;
    window.clearTimeout(this.timer);
    this.socket?.close(1000);
  }
}
