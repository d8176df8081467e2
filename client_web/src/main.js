/**
 * The application shell: one connection for the page, a hash router over the pages,
 * the connection banner, settings, the help overlay and keyboard dispatch.
 *
 * Routes: `#/` home, `#/room/ID` play or watch a room (racers rejoin their seat; with
 * `/ghost/ROOM/GEN/SEAT` after it, against that finished game's ghost), `#/watch/ID`
 * watch only, `#/replay/ID/GEN` a finished game, `#/daily` today's challenges and
 * `#/daily/DATE/SLUG` one day's leaderboard.
 */

import { Connection, defaultUrl } from "./net.js";
import { DailyPage } from "./pages/daily.js";
import { HomePage } from "./pages/home.js";
import { ReplayPage } from "./pages/replay.js";
import { RoomPage } from "./pages/room.js";
import { h } from "./ui.js";

const storage = window.localStorage;

function loadSettings() {
  const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const saved = JSON.parse(storage.getItem("klondike.settings") ?? "{}");
  return { motion: saved.motion ?? !reduce, scoring: saved.scoring ?? "standard" };
}

class App {
  constructor() {
    this.main = document.getElementById("app");
    this.banner = document.getElementById("banner");
    this.settings = loadSettings();
    this.conn = null;
    this.page = null;
    this.settingsListeners = new Set();
    this.applySettings();
    this.bindChrome();
    window.addEventListener("hashchange", () => this.route());
    document.addEventListener("keydown", (event) => this.key(event));
    this.route();
  }

  /** The page's connection, started on first use. */
  connection() {
    if (!this.conn) {
      this.conn = new Connection(defaultUrl(window.location), {
        name: storage.getItem("klondike.name") ?? "",
        storage,
      });
      this.conn.on("down", ({ delay }) =>
        this.showBanner(`Connection lost. Reconnecting in ${Math.ceil(delay / 1000)} s…`, true),
      );
      this.conn.on("open", () => this.hideBanner());
      this.conn.on("final", ({ message }) => this.showBanner(message, false));
      this.conn.start();
    }
    return this.conn;
  }

  /** Wait until the connection has said hello. */
  ready() {
    const conn = this.connection();
    if (conn.online) return Promise.resolve(conn);
    return new Promise((resolve) => {
      const off = conn.on("open", () => {
        off();
        resolve(conn);
      });
    });
  }

  setName(name) {
    storage.setItem("klondike.name", name);
    if (this.conn) this.conn.name = name;
  }

  showBanner(text, retry) {
    this.banner.replaceChildren(text, " ");
    if (retry) {
      this.banner.append(
        h("button.ghost", { type: "button", onclick: () => this.conn?.retryNow() }, "Retry now"),
      );
    }
    this.banner.className = "banner";
    this.banner.hidden = false;
  }

  hideBanner() {
    this.banner.hidden = true;
  }

  navigate(hash) {
    if (window.location.hash === hash) this.route();
    else window.location.hash = hash;
  }

  route() {
    const parts = window.location.hash
      .replace(/^#\/?/, "")
      .split("/")
      .filter(Boolean)
      .map(decodeURIComponent);
    this.page?.unmount();
    this.main.replaceChildren();
    const [name, ...args] = parts;
    if (name === "room" && args[0]) {
      const ghost =
        args[1] === "ghost" && /^\d+$/.test(args[3] ?? "")
          ? { room: args[2], gen: Number(args[3]), seat: Number(args[4] ?? 0) }
          : null;
      this.page = new RoomPage(this, args[0], { watchOnly: false, ghost });
    } else if (name === "watch" && args[0]) this.page = new RoomPage(this, args[0], { watchOnly: true });
    else if (name === "replay" && args[0] && /^\d+$/.test(args[1] ?? ""))
      this.page = new ReplayPage(this, args[0], Number(args[1]));
    else if (name === "daily") this.page = new DailyPage(this, args[0] ?? null, args[1] ?? null);
    else this.page = new HomePage(this);
    this.page.mount(this.main);
  }

  key(event) {
    const target = event.target;
    if (
      target instanceof HTMLInputElement ||
      target instanceof HTMLSelectElement ||
      target instanceof HTMLTextAreaElement
    )
      return;
    if (document.querySelector("dialog[open]")) return;
    if (event.key === "?") {
      event.preventDefault();
      document.getElementById("help").showModal();
      return;
    }
    this.page?.onKey?.(event);
  }

  // ------------------------------------------------------------ settings

  onSettings(listener) {
    this.settingsListeners.add(listener);
    return () => this.settingsListeners.delete(listener);
  }

  applySettings() {
    document.documentElement.classList.toggle("reduced-motion", !this.settings.motion);
    storage.setItem("klondike.settings", JSON.stringify(this.settings));
    for (const listener of this.settingsListeners) listener(this.settings);
  }

  bindChrome() {
    document
      .getElementById("help-button")
      .addEventListener("click", () => document.getElementById("help").showModal());
    const dialog = document.getElementById("settings");
    const form = dialog.querySelector("form");
    document.getElementById("settings-button").addEventListener("click", () => {
      form.elements.motion.checked = this.settings.motion;
      form.elements.scoring.value = this.settings.scoring;
      dialog.showModal();
    });
    form.addEventListener("change", () => {
      this.settings = { motion: form.elements.motion.checked, scoring: form.elements.scoring.value };
      this.applySettings();
    });
  }
}

window.klondike = new App();
