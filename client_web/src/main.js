// @ts-check
/**
 * The application shell: one connection for the page, a hash router over the pages,
 * the connection banner, settings, the help overlay and keyboard dispatch.
 *
 * Routes: `#/` home, `#/room/ID` play or watch a room (racers rejoin their seat; with
 * `/ghost/ROOM/GEN/SEAT` after it, against that finished game's ghost), `#/watch/ID`
 * watch only, `#/replay/ID/GEN` a finished game, `#/match/ID/GEN` the match of which that
 * game is a deal, `#/daily` today's challenges and
 * `#/daily/DATE/SLUG` one day's leaderboard, `#/stats` your statistics, `#/me/games` your
 * games (filters after `?`), `#/account` your account (made, signed in, signed out,
 * deleted; reached from Settings), `#/@/USERNAME` an account's profile and `#/@/~ID` a
 * guest's, `#/friends` your friends (linked from the home page; a challenge from a
 * friend shows on every page, `challenges.js`), `#/tournaments` the
 * tournaments and `#/t/ID` one of them, `#/quick/draw1` and `#/quick/draw3` waiting for a
 * quick race. A player who opens a room's or a tournament's link
 * without ever having chosen a name is asked for one first, once (`pages/names.js`).
 *
 * The page's language (`i18n.js`) is chosen and its catalog loaded before the first
 * route; switching it (the pickers on the home page and in Settings) translates the
 * header and dialogs again and calls the current page's `relabel`, which redraws its
 * text in place: nothing is unmounted, no room is left or joined again.
 */

import { AccountPage } from "./pages/account.js";
import { ChallengeInbox } from "./challenges.js";
import { FriendsPage } from "./pages/friends.js";
import { ProfilePage } from "./pages/profile.js";
import { has, onLocaleChange, setLocale, start, t, translateDom } from "./i18n.js";
import { Connection, defaultUrl } from "./net.js";
import { DailyPage } from "./pages/daily.js";
import { HomePage } from "./pages/home.js";
import { GamesPage } from "./pages/games.js";
import { MatchPage } from "./pages/match.js";
import { askName } from "./pages/names.js";
import { QuickPage, quickVariant } from "./pages/quick.js";
import { ReplayPage } from "./pages/replay.js";
import { RoomPage } from "./pages/room.js";
import { StatsPage } from "./pages/stats.js";
import { TournamentPage } from "./pages/tournament.js";
import { TournamentsPage } from "./pages/tournaments.js";
import { control, fillLanguages, h } from "./ui.js";

/**
 * The player's settings, kept in localStorage: animations (off by default with the
 * system's reduced motion), the score shown, sounds (off by default), one-click
 * moves (off by default: a click picks a card up, as before), and reactions shown
 * while playing (off by default) and while watching (on by default).
 * @typedef {{motion: boolean, scoring: string, sound: boolean, autoMove: boolean,
 *   reactionsPlaying: boolean, reactionsWatching: boolean}} Settings
 */

/**
 * What the router mounts: one page at a time.
 * @typedef {object} Page
 * @property {(root: HTMLElement) => unknown} mount
 * @property {() => void} unmount
 * @property {(event: KeyboardEvent) => void} [onKey]
 * @property {() => void} [relabel] draw every text again in the active language, in place:
 *   state, connections, timers, focus and what the player typed stay as they are. A page
 *   without one shows the new language from its next mount.
 */

const storage = window.localStorage;

/**
 * An element of index.html, which has them all.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{new (): T, prototype: T}} type
 * @returns {T}
 */
function byId(id, type) {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`index.html has no #${id}`);
  return node;
}

/** @returns {Settings} */
function loadSettings() {
  const reduce = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const saved = JSON.parse(storage.getItem("klondike.settings") ?? "{}");
  return {
    motion: saved.motion ?? !reduce,
    scoring: saved.scoring ?? "standard",
    sound: saved.sound ?? false,
    autoMove: saved.autoMove ?? false,
    reactionsPlaying: saved.reactionsPlaying ?? false,
    reactionsWatching: saved.reactionsWatching ?? true,
  };
}

export class App {
  constructor() {
    this.main = byId("app", HTMLElement);
    this.banner = byId("banner", HTMLElement);
    this.settings = loadSettings();
    /** @type {Connection | null} */
    this.conn = null;
    /** @type {Page | null} */
    this.page = null;
    /** A room this page's `create` (with `join`) already joined: its page need not join. */
    /** @type {string | null} */
    this.joined = null;
    /** Rooms and tournaments this page created: opening them asks for no name. */
    /** @type {Set<string>} */
    this.created = new Set();
    /** @type {Promise<void> | null} the name question, while it is asked */
    this.asking = null;
    /** @type {Set<(settings: Settings) => void>} */
    this.settingsListeners = new Set();
    /** @type {Set<(name: string) => void>} */
    this.nameListeners = new Set();
    /** @type {{text: () => string, retry: boolean} | null} what the banner says, while shown */
    this.bannerShown = null;
    // The websocket opens (and says hello) now, while the page's modules run and its first
    // page renders: a game's requests then go out at once, not after a handshake.
    this.connection();
    /** Challenges from friends, shown on every page (`challenges.js`). */
    this.inbox = new ChallengeInbox(this);
    this.applySettings();
    this.bindChrome();
    document.addEventListener("keydown", (event) => this.key(event));
    // The first page renders once its language's catalog is in.
    this.started = start().then(() => {
      this.relabelChrome();
      onLocaleChange(() => this.relabel());
      window.addEventListener("hashchange", () => this.route());
      this.route();
    });
  }

  /** The page's connection, started with the page. */
  connection() {
    if (!this.conn) {
      // index.html's first script opened the socket while the modules loaded.
      const early = /** @type {{klondikeSocket?: WebSocket}} */ (/** @type {unknown} */ (window));
      this.conn = new Connection(defaultUrl(window.location), {
        name: storage.getItem("klondike.name") ?? "",
        storage,
        early: early.klondikeSocket ?? null,
      });
      delete early.klondikeSocket;
      this.conn.on("down", ({ delay }) =>
        this.showBanner(() => t("app.banner.reconnecting", { seconds: Math.ceil(delay / 1000) }), true),
      );
      this.conn.on("open", (welcome) => {
        this.hideBanner();
        this.nameChanged(welcome.name);
      });
      this.conn.on("final", ({ code, message }) =>
        this.showBanner(() => (has(`app.closed.${code}`) ? t(`app.closed.${code}`) : message), false),
      );
      this.conn.start();
    }
    return this.conn;
  }

  /**
   * Wait until the connection has said hello.
   * @returns {Promise<Connection>}
   */
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

  /**
   * Wait until the connection has sent hello: requests may go (their replies follow
   * `welcome`); no need to wait for the server's answer first.
   * @returns {Promise<Connection>}
   */
  session() {
    const conn = this.connection();
    if (conn.greeted) return Promise.resolve(conn);
    return new Promise((resolve) => {
      const off = conn.on("hello", () => {
        off();
        resolve(conn);
      });
    });
  }

  /**
   * Show room `room` whose `create` joined it already: mounted at once (no `hashchange`
   * to wait for), so its page gets the `room` and board frames that follow `created`.
   * @param {string} room
   */
  openJoined(room) {
    this.joined = room;
    this.created.add(room);
    window.history.pushState(null, "", `#/room/${encodeURIComponent(room)}`);
    this.route();
  }

  /**
   * Whether `room`'s page should skip its first `join` (its `create` joined it); once.
   * @param {string} room
   */
  takeJoined(room) {
    const joined = this.joined === room;
    this.joined = null;
    return joined;
  }

  // ------------------------------------------------------------ the player's name

  /** The player's name: as the server last confirmed it, else as stored. */
  displayName() {
    return this.conn?.name || storage.getItem("klondike.name") || "";
  }

  /**
   * Take a new name: at once when connected (every seat of this connection's rooms
   * follows), stored for the next connections. Resolves with the name as the server
   * shows it; rejects with its refusal (`bad_name`, `rate_limited`).
   * @param {string} name
   */
  async setName(name) {
    const shown = await this.connection().rename(name);
    this.nameChanged(shown);
    return shown;
  }

  /**
   * Call `listener` with the player's name whenever it changes (a rename, a welcome);
   * returns its removal.
   * @param {(name: string) => void} listener
   */
  onName(listener) {
    this.nameListeners.add(listener);
    return () => this.nameListeners.delete(listener);
  }

  /** @param {string} name */
  nameChanged(name) {
    for (const listener of this.nameListeners) listener(name);
  }

  /**
   * Whether opening route `name`/`id` should first ask for a name: a room's invite or a
   * tournament's link, for a player who never chose one (none stored), unless this page
   * created it, nor a signed-in player.
   * @param {string | undefined} name
   * @param {string | undefined} id
   */
  mustAskName(name, id) {
    if ((name !== "room" && name !== "t") || !id || this.created.has(id)) return false;
    // A signed-in account has a name: its username, unless this device chose another.
    return !storage.getItem("klondike.name") && !this.conn?.username;
  }

  /** Ask for a name once (with the guest name the server gave as its default). */
  askName() {
    this.asking ??= this.ready()
      .then((conn) => askName(this, conn.name))
      .finally(() => {
        this.asking = null;
      });
    return this.asking;
  }

  /**
   * @param {() => string} text its words in the active language (again after a switch)
   * @param {boolean} retry offer to reconnect now
   */
  showBanner(text, retry) {
    this.bannerShown = { text, retry };
    this.banner.replaceChildren(text(), " ");
    if (retry) {
      this.banner.append(
        h("button.ghost", { type: "button", onclick: () => this.conn?.retryNow() }, t("app.banner.retry")),
      );
    }
    this.banner.className = "banner";
    this.banner.hidden = false;
  }

  hideBanner() {
    this.bannerShown = null;
    this.banner.hidden = true;
  }

  // ------------------------------------------------------------ language

  /**
   * Switch the page to language `code` (one of i18n.js LOCALES): stored, and every text
   * drawn again in place (`relabel`).
   * @param {string} code
   */
  chooseLocale(code) {
    return setLocale(code);
  }

  /** index.html's own text (header, dialogs) and the banner, in the active language. */
  relabelChrome() {
    translateDom(document);
    const dialog = byId("settings", HTMLDialogElement);
    const picker = dialog.querySelector("select[name=lang]");
    if (picker instanceof HTMLSelectElement) fillLanguages(picker);
    if (this.bannerShown) this.showBanner(this.bannerShown.text, this.bannerShown.retry);
  }

  /** Every text on the page in the active language, the current page's in place. */
  relabel() {
    this.relabelChrome();
    this.page?.relabel?.();
  }

  /** @param {string} hash */
  navigate(hash) {
    if (window.location.hash === hash) this.route();
    else window.location.hash = hash;
  }

  route() {
    const [path, search = ""] = window.location.hash.replace(/^#\/?/, "").split("?", 2);
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    this.page?.unmount();
    this.page = null;
    this.main.replaceChildren();
    const [name, ...args] = parts;
    if (this.mustAskName(name, args[0])) {
      // Before its page joins: the seat it takes shows the chosen name.
      this.askName().then(() => this.route());
      return;
    }
    if (name === "room" && args[0]) {
      const ghost =
        args[1] === "ghost" && /^\d+$/.test(args[3] ?? "")
          ? { room: args[2], gen: Number(args[3]), seat: Number(args[4] ?? 0) }
          : null;
      this.page = new RoomPage(this, args[0], { watchOnly: false, ghost });
    } else if (name === "watch" && args[0]) this.page = new RoomPage(this, args[0], { watchOnly: true });
    else if (name === "replay" && args[0] && /^\d+$/.test(args[1] ?? ""))
      this.page = new ReplayPage(this, args[0], Number(args[1]));
    else if (name === "match" && args[0] && /^\d+$/.test(args[1] ?? ""))
      this.page = new MatchPage(this, args[0], Number(args[1]));
    else if (name === "daily") this.page = new DailyPage(this, args[0] ?? null, args[1] ?? null);
    else if (name === "stats") this.page = new StatsPage(this);
    else if (name === "me" && args[0] === "games")
      this.page = new GamesPage(this, new URLSearchParams(search));
    else if (name === "account") this.page = new AccountPage(this);
    else if (name === "friends") this.page = new FriendsPage(this);
    else if (name === "@" && args[0]) this.page = new ProfilePage(this, args[0]);
    else if (name === "tournaments") this.page = new TournamentsPage(this);
    else if (name === "t" && args[0]) this.page = new TournamentPage(this, args[0]);
    else if (name === "quick" && quickVariant(args[0] ?? ""))
      this.page = new QuickPage(this, quickVariant(args[0] ?? "") ?? "");
    else this.page = new HomePage(this);
    this.page.mount(this.main);
  }

  /** @param {KeyboardEvent} event */
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
      byId("help", HTMLDialogElement).showModal();
      return;
    }
    this.page?.onKey?.(event);
  }

  // ------------------------------------------------------------ settings

  /**
   * Call `listener` with the settings whenever they change; returns its removal.
   * @param {(settings: Settings) => void} listener
   */
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
    byId("help-button", HTMLButtonElement).addEventListener("click", () =>
      byId("help", HTMLDialogElement).showModal(),
    );
    const dialog = byId("settings", HTMLDialogElement);
    const form = dialog.querySelector("form");
    if (!form) return;
    const motion = control(form, "motion", HTMLInputElement);
    const scoring = control(form, "scoring", RadioNodeList);
    const sound = control(form, "sound", HTMLInputElement);
    const autoMove = control(form, "autoMove", HTMLInputElement);
    const reactionsPlaying = control(form, "reactionsPlaying", HTMLInputElement);
    const reactionsWatching = control(form, "reactionsWatching", HTMLInputElement);
    byId("settings-button", HTMLButtonElement).addEventListener("click", () => {
      motion.checked = this.settings.motion;
      scoring.value = this.settings.scoring;
      sound.checked = this.settings.sound;
      autoMove.checked = this.settings.autoMove;
      reactionsPlaying.checked = this.settings.reactionsPlaying;
      reactionsWatching.checked = this.settings.reactionsWatching;
      dialog.showModal();
    });
    byId("account-link", HTMLAnchorElement).addEventListener("click", () => dialog.close());
    form.addEventListener("change", (event) => {
      const target = event.target;
      if (target instanceof HTMLSelectElement && target.name === "lang") {
        this.chooseLocale(target.value);
        return;
      }
      this.settings = {
        motion: motion.checked,
        scoring: scoring.value,
        sound: sound.checked,
        autoMove: autoMove.checked,
        reactionsPlaying: reactionsPlaying.checked,
        reactionsWatching: reactionsWatching.checked,
      };
      this.applySettings();
    });
  }
}

// The page's one App, also for a look from the browser's console.
Object.assign(window, { klondike: new App() });
