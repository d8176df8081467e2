/**
 * The connection to a Klondike Live server: msgpack frames over one WebSocket, the
 * `hello` handshake, requests matched by `rid`, and reconnection with backoff.
 *
 * Rooms and boards are not kept here: listeners get every frame and an `open` event
 * after each (re)connection, on which they rejoin with their offsets.
 */

import { decode, encode } from "@msgpack/msgpack";

export const PROTOCOL_VERSION = 1;

/** Close codes after which reconnecting would not help (protocol section 9). */
const FINAL_CLOSES = new Map([
  [1008, "The server refused this client's messages."],
  [1009, "A message was too large for the server."],
  [4001, "This room was opened in another window or tab."],
  [4003, "This page is out of date: reload it."],
]);

/** Delay before reconnection attempt `attempt` (0, 1, ...): exponential, capped, jittered. */
export function backoffDelay(attempt, random = Math.random) {
  const base = Math.min(10_000, 250 * 2 ** attempt);
  return Math.round(base / 2 + (random() * base) / 2);
}

/** The websocket URL of the server that served this page. */
export function defaultUrl(location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

export class ServerError extends Error {
  constructor(frame) {
    super(frame.msg || frame.code);
    this.code = frame.code;
    this.frame = frame;
  }
}

export class Connection {
  /**
   * @param {string} url
   * @param {{name?: string, storage?: Storage, WebSocketImpl?: typeof WebSocket}} options
   */
  constructor(url, { name = "", storage = null, WebSocketImpl = WebSocket } = {}) {
    this.url = url;
    this.name = name;
    this.storage = storage;
    this.WebSocketImpl = WebSocketImpl;
    this.listeners = new Map();
    this.requests = new Map();
    this.nextRid = 1;
    this.socket = null;
    this.attempt = 0;
    this.closed = false;
    this.online = false;
    this.user = null;
    this.clockOffset = 0;
    this.timer = null;
  }

  /** Register `handler` for `event` ("frame", "open", "down", "final"); returns its removal. */
  on(event, handler) {
    if (!this.listeners.has(event)) this.listeners.set(event, new Set());
    this.listeners.get(event).add(handler);
    return () => this.listeners.get(event).delete(handler);
  }

  emit(event, value) {
    for (const handler of [...(this.listeners.get(event) ?? [])]) handler(value);
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
    const socket = new this.WebSocketImpl(this.url);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.onopen = () => {
      const hello = { t: "hello", v: PROTOCOL_VERSION };
      if (this.token) hello.token = this.token;
      if (this.name) hello.name = this.name;
      this.sentAt = Date.now();
      this.transmit(hello);
    };
    socket.onmessage = (event) => this.receive(event.data);
    socket.onclose = (event) => this.lost(socket, event.code);
  }

  receive(data) {
    if (typeof data === "string") return;
    let frame;
    try {
      frame = decode(new Uint8Array(data));
    } catch {
      return;
    }
    if (frame === null || typeof frame !== "object") return;
    if (frame.t === "welcome") {
      this.user = frame.user;
      this.name = frame.name;
      this.storage?.setItem("klondike.token", frame.token);
      this.storage?.setItem("klondike.name", frame.name);
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
    if (frame.rid !== undefined && this.requests.has(frame.rid)) {
      const { resolve, reject } = this.requests.get(frame.rid);
      this.requests.delete(frame.rid);
      if (frame.t === "error") reject(new ServerError(frame));
      else resolve(frame);
    }
    if (frame.t === "error" && (frame.code === "token_invalid" || frame.code === "token_expired")) {
      // The token is refused: forget it, and come back as a new guest.
      this.storage?.removeItem("klondike.token");
    }
    this.emit("frame", frame);
  }

  syncClock(pong) {
    const sent = pong.sentAt;
    if (sent === undefined) return;
    this.clockOffset = pong.now - Math.round((sent + Date.now()) / 2);
  }

  lost(socket, code) {
    if (socket !== this.socket) return;
    this.socket = null;
    const wasOnline = this.online;
    this.online = false;
    for (const { reject } of this.requests.values()) reject(new Error("disconnected"));
    this.requests.clear();
    if (this.closed) return;
    if (FINAL_CLOSES.has(code)) {
      this.closed = true;
      this.emit("final", { code, message: FINAL_CLOSES.get(code) });
      return;
    }
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    this.emit("down", { code, delay, wasOnline });
    this.timer = setTimeout(() => this.open(), delay);
  }

  /** Reconnect now instead of waiting for the backoff timer. */
  retryNow() {
    if (this.socket || this.closed) return;
    clearTimeout(this.timer);
    this.open();
  }

  transmit(frame) {
    if (!this.socket || this.socket.readyState !== 1) return false;
    this.socket.send(encode(frame));
    return true;
  }

  /** Send a frame once connected; returns false when offline (the caller resends on `open`). */
  send(frame) {
    return this.online && this.transmit(frame);
  }

  /** Send a frame with a fresh `rid`; resolves with the reply, rejects on `error`. */
  request(frame) {
    const rid = this.nextRid++;
    return new Promise((resolve, reject) => {
      if (!this.transmit({ ...frame, rid })) {
        reject(new Error("disconnected"));
        return;
      }
      const sentAt = Date.now();
      this.requests.set(rid, {
        resolve: (reply) => resolve(Object.assign(reply, { sentAt })),
        reject,
      });
    });
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.socket?.close(1000);
  }
}
