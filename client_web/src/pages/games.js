// @ts-check
/**
 * Your games (`#/me/games`): every game you finished, newest first, from
 * `GET /api/players/ID/games` (docs/protocol.md section 10): when, the kind of game and
 * its variant, how it ended for you, moves, time, cards home and who else played, each
 * with its replay. Filters (kind, variant, result, opponent) ask the server again; *More
 * games* appends the next page (the answer's `next` cursor). The filters live in the
 * address (`#/me/games?kind=race&opponent=ID`, also `limit`, the page size), so a
 * filtered list can be reloaded, bookmarked or linked to (the results' head-to-head
 * links to your games against one racer). Filtered by an opponent, the list opens with
 * your record against them (`GET /api/players/ME/vs/THEM`, worded as under a race's
 * results; nothing when it cannot be had). Every text is the catalog's (`games.*`);
 * `relabel` draws the page again from what it holds.
 */

import { formatDateTime, formatList, formatNumber, formatRelative, t } from "../i18n.js";
import { describeVariant, parseVariant } from "../rules.js";
import { HttpError, announce, errorText, formatTime, getJSON, h, rerender, statusWord } from "../ui.js";
import { labelled, levelNamed } from "./bots.js";
import { recordLine } from "./head-to-head.js";
import { opponentLinks } from "./profile.js";
import { kindWord } from "./stats.js";

/** @import { App } from "../main.js" */
/** @import { GameLine, GameOpponent, HeadToHead, PlayerGamesPage } from "../wire.js" */

/** The kinds of game a page can be narrowed to, in the order the filter offers them. */
export const KINDS = ["solo", "race", "race_machine", "daily", "unranked"];

/** The variants the home page offers, in its order: the variant filter's choices. */
export const VARIANTS = [
  "draw=1 passes=1 f2t=no",
  "draw=3 passes=3 f2t=no",
  "draw=1 passes=unlimited f2t=no",
  "draw=3 passes=unlimited f2t=no",
  "draw=1 passes=1 f2t=yes",
  "draw=3 passes=3 f2t=yes",
  "draw=1 passes=unlimited f2t=yes",
  "draw=3 passes=unlimited f2t=yes",
];

/** Games a page holds unless the address asks for another number (the server's default). */
export const PAGE_SIZE = 20;

/**
 * Which games the page lists ("": any).
 * @typedef {{kind: string, variant: string, result: string, opponent: string}} GameFilters
 */

/** The names of the filters, in the address and the API alike. */
const FILTERS = /** @type {const} */ (["kind", "variant", "result", "opponent"]);

/**
 * The filters and page size an address asks for (`?kind=race&limit=5`); anything the
 * page does not offer is dropped, so a hand-made address cannot make a bad request.
 * @param {URLSearchParams} query
 * @returns {{filters: GameFilters, limit: number}}
 */
export function readQuery(query) {
  const kind = query.get("kind") ?? "";
  const result = query.get("result") ?? "";
  const variant = query.get("variant") ?? "";
  const opponent = query.get("opponent") ?? "";
  const limit = Number(query.get("limit"));
  return {
    filters: {
      kind: KINDS.includes(kind) ? kind : "",
      variant: /^draw=[13] passes=(\d+|unlimited) f2t=(yes|no)$/.test(variant) ? variant : "",
      result: result === "won" || result === "lost" ? result : "",
      opponent: /^[A-Za-z0-9_-]{1,64}$/.test(opponent) ? opponent : "",
    },
    limit: Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : PAGE_SIZE,
  };
}

/**
 * The address of the page with these filters (the page size kept when not the default).
 * @param {GameFilters} filters
 * @param {number} limit
 */
export function pageHash(filters, limit) {
  const query = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) query.set(name, filters[name]);
  if (limit !== PAGE_SIZE) query.set("limit", String(limit));
  const text = query.toString();
  return text ? `#/me/games?${text}` : "#/me/games";
}

/**
 * The API path of one page of `user`'s games.
 * @param {string} user
 * @param {GameFilters} filters
 * @param {number} limit
 * @param {string | null} cursor where the page continues (null: the first page)
 */
export function gamesPath(user, filters, limit, cursor) {
  const query = new URLSearchParams();
  for (const name of FILTERS) if (filters[name]) query.set(name, filters[name]);
  if (cursor) query.set("cursor", cursor);
  query.set("limit", String(limit));
  return `/api/players/${encodeURIComponent(user)}/games?${query}`;
}

/**
 * How long ago `then` was, as a value and unit for `Intl.RelativeTimeFormat`: the
 * largest unit that makes a whole number (seconds under a minute are "now").
 * @param {number} then ms
 * @param {number} now ms
 * @returns {[number, Intl.RelativeTimeFormatUnit]}
 */
export function agoParts(then, now) {
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return [0, "second"];
  const minutes = Math.round(seconds / 60);
  if (minutes < 45) return [-minutes, "minute"];
  const hours = Math.round(minutes / 60);
  if (hours < 22) return [-hours, "hour"];
  const days = Math.round(hours / 24);
  if (days < 7) return [-days, "day"];
  if (days < 30) return [-Math.round(days / 7), "week"];
  if (days < 365) return [-Math.max(1, Math.round(days / 30.44)), "month"];
  return [-Math.round(days / 365.25), "year"];
}

/**
 * "2 days ago", "yesterday", "now", as the active language says it.
 * @param {number} then ms
 * @param {number} now ms
 */
export function ago(then, now) {
  const [value, unit] = agoParts(then, now);
  return formatRelative(value, unit);
}

/**
 * How a game ended for you: won or lost, then your place among several players or,
 * alone, how the game stopped (resigned, out of time).
 * @param {GameLine} game
 * @returns {{won: boolean, detail: string}}
 */
export function resultParts(game) {
  if (game.players > 1)
    return { won: game.won, detail: t("games.result.place", { rank: game.rank, players: game.players }) };
  return { won: game.won, detail: game.won ? "" : statusWord(game.status) };
}

/**
 * Another player's name as shown, a bot's labelled (its level found from its name).
 * @param {GameOpponent} other
 */
export function opponentName(other) {
  return labelled(other.bot ? { ...other, level: levelNamed(other.name) } : other);
}

/**
 * The other players of a game, in rank order, bots labelled; "–" alone.
 * @param {GameOpponent[]} opponents
 */
export function opponentsText(opponents) {
  if (!opponents.length) return "–";
  return formatList(opponents.map(opponentName));
}

/**
 * Opponents seen on the page, by user id (the opponent filter's choices), with the
 * games of `page` added; people first, then bots, each by name.
 * @param {Map<string, GameOpponent>} known
 * @param {GameLine[]} games
 */
export function addOpponents(known, games) {
  for (const game of games) for (const other of game.opponents) known.set(other.user, other);
  return [...known.values()].sort(
    (a, b) => Number(a.bot) - Number(b.bot) || opponentName(a).localeCompare(opponentName(b)),
  );
}

/** The table's columns, in order: keys of `games.column`. */
const COLUMNS = ["when", "game", "result", "moves", "time", "home", "opponents", "replay"];

export class GamesPage {
  /**
   * @param {App} app
   * @param {URLSearchParams} query the address's filters and page size
   */
  constructor(app, query) {
    this.app = app;
    const { filters, limit } = readQuery(query);
    this.filters = filters;
    this.limit = limit;
    /** @type {HTMLElement | null} */
    this.root = null;
    /** @type {GameLine[]} */
    this.games = [];
    /** @type {string | null} where the next page starts */
    this.next = null;
    /**
     * What the list shows: its first page loading, the games (more loading or not), or
     * why they could not be loaded.
     * @type {"loading" | "loaded" | "more" | "failed"}
     */
    this.state = "loading";
    /** @type {unknown} */
    this.error = null;
    /** Every opponent seen on this page, for the opponent filter. */
    /** @type {Map<string, GameOpponent>} */
    this.opponents = new Map();
    /** Counts the requests, so that an answer to filters since changed is dropped. */
    this.asked = 0;
    /** @type {string | null} the player's id, once the connection said it */
    this.user = null;
    /** @type {HeadToHead | null} your record against the filter's opponent, when known */
    this.record = null;
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    root.append(this.build());
    this.load(false);
  }

  unmount() {
    this.root = null;
    this.asked += 1; // answers still on their way are dropped
  }

  /** The page again in the active language. */
  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  /**
   * Ask for the first page (`more` false) or the next one.
   * @param {boolean} more
   */
  async load(more) {
    const asked = ++this.asked;
    this.state = more ? "more" : "loading";
    if (!more) {
      this.games = [];
      this.next = null;
      this.record = null;
    }
    this.relabel();
    try {
      if (this.user === null) {
        const conn = await this.app.ready(); // your id: the guest's own, from `welcome`
        this.user = conn.user;
      }
      if (!this.user) throw new Error("no user");
      const path = gamesPath(this.user, this.filters, this.limit, more ? this.next : null);
      const opponent = more ? "" : this.filters.opponent;
      const [page, record] = await Promise.all([
        /** @type {Promise<PlayerGamesPage | null>} */ (getJSON(path)),
        opponent ? this.askRecord(this.user, opponent) : null,
      ]);
      if (asked !== this.asked || !this.root) return;
      if (!more) this.record = record;
      const games = page?.games ?? [];
      const before = this.games.length;
      this.games = more ? [...this.games, ...games] : games;
      this.next = page?.next ?? null;
      this.state = "loaded";
      addOpponents(this.opponents, games);
      this.relabel();
      if (more) {
        // The first game added takes the focus, and the count is said.
        const link = this.root.querySelectorAll("tbody [data-testid=games-replay]")[before];
        if (link instanceof HTMLElement) link.focus();
        announce(t("games.added", { n: games.length }));
      }
    } catch (error) {
      if (asked !== this.asked || !this.root) return;
      this.error = error;
      this.state = more ? "loaded" : "failed";
      if (more) announce(this.failureText());
      else this.relabel();
    }
  }

  /**
   * Your record against `opponent`, or null when it cannot be had (nothing is said).
   * @param {string} user
   * @param {string} opponent
   * @returns {Promise<HeadToHead | null>}
   */
  async askRecord(user, opponent) {
    const path = `/api/players/${encodeURIComponent(user)}/vs/${encodeURIComponent(opponent)}`;
    try {
      const record = /** @type {HeadToHead | null} */ (await getJSON(path));
      return record && typeof record.games === "number" && record.games > 0 ? record : null;
    } catch {
      return null;
    }
  }

  /**
   * Your record against the filter's opponent, above the list, under their name as the
   * listed games give it; nothing without a record or a game naming them.
   * @param {number} now
   */
  recordBox(now) {
    const opponent = this.filters.opponent;
    const other = this.games.flatMap((game) => game.opponents).find((o) => o.user === opponent);
    if (!opponent || !this.record || !other) return null;
    return h(
      "section.head-to-head",
      { "data-testid": "games-head-to-head", "aria-labelledby": "games-head-to-head-title" },
      h("h2", { id: "games-head-to-head-title" }, t("games.h2h.title")),
      h("p.row", {}, ...recordLine(this.record, opponentName(other), undefined, now)),
    );
  }

  /**
   * Narrow the list by one filter: the address follows (without a new history entry)
   * and the first page is asked for again.
   * @param {keyof GameFilters} name
   * @param {string} value
   */
  choose(name, value) {
    this.filters = { ...this.filters, [name]: value };
    window.history.replaceState(null, "", pageHash(this.filters, this.limit));
    this.load(false);
  }

  clearFilters() {
    this.filters = { kind: "", variant: "", result: "", opponent: "" };
    window.history.replaceState(null, "", pageHash(this.filters, this.limit));
    this.load(false);
    this.root?.querySelector("select")?.focus();
  }

  /** Why the games could not be loaded, in words. */
  failureText() {
    const error = this.error;
    if (error instanceof HttpError && error.status === 503) return t("games.unavailable");
    return t("games.failed", { reason: errorText(error) });
  }

  /** The page's content in the active language. */
  build() {
    return h(
      "section.panel.games-page",
      { "aria-labelledby": "games-title" },
      h("h1", { id: "games-title" }, t("games.title")),
      this.filterForm(),
      h(
        "div",
        { "data-testid": "games-list", "aria-busy": this.state === "loading" ? "true" : "false" },
        this.body(),
      ),
      h(
        "p.row",
        { style: "justify-content:space-between" },
        h("a", { href: "#/" }, t("games.home")),
        h("a", { href: "#/stats" }, t("games.stats")),
      ),
    );
  }

  /** The filters: one labelled choice each, applied as soon as it changes. */
  filterForm() {
    const f = this.filters;
    /**
     * @param {keyof GameFilters} name
     * @param {string} anyText
     * @param {[string, string][]} options
     */
    const choice = (name, anyText, options) =>
      h(
        "label",
        {},
        t(`games.filter.${name}`),
        h(
          "select",
          {
            name,
            "data-testid": `games-filter-${name}`,
            onchange: (event) => this.choose(name, /** @type {HTMLSelectElement} */ (event.target).value),
          },
          [["", anyText], ...options].map(([value, label]) =>
            h("option", { value, selected: value === f[name] }, label),
          ),
        ),
      );
    const variants = VARIANTS.includes(f.variant) || !f.variant ? VARIANTS : [...VARIANTS, f.variant];
    const opponents = addOpponents(this.opponents, []);
    /** @type {[string, string][]} */
    const opponentOptions = opponents.map((o) => [o.user, opponentName(o)]);
    if (f.opponent && !this.opponents.has(f.opponent))
      opponentOptions.push([f.opponent, t("games.filter.chosen")]);
    return h(
      "form.games-filters",
      { "aria-label": t("games.filter.title"), onsubmit: (event) => event.preventDefault() },
      choice(
        "kind",
        t("games.filter.anyKind"),
        KINDS.map((kind) => [kind, kindWord(kind)]),
      ),
      choice(
        "variant",
        t("games.filter.anyVariant"),
        variants.map((variant) => [variant, describeVariant(parseVariant(variant))]),
      ),
      choice("result", t("games.filter.anyResult"), [
        ["won", t("games.result.won")],
        ["lost", t("games.result.lost")],
      ]),
      choice("opponent", t("games.filter.anyone"), opponentOptions),
    );
  }

  /** The list, or what stands for it: loading, the failure, nothing found. */
  body() {
    if (this.state === "loading") return h("p.muted", { role: "status" }, t("games.loading"));
    if (this.state === "failed")
      return h(
        "div",
        { role: "alert" },
        h("p.error-text", { "data-testid": "games-error" }, this.failureText()),
        h("button", { type: "button", onclick: () => this.load(false) }, t("games.retry")),
      );
    const filtered = FILTERS.some((name) => this.filters[name]);
    if (!this.games.length) {
      return filtered
        ? h(
            "div",
            { "data-testid": "games-empty" },
            h("p", {}, t("games.noMatch")),
            h("button.ghost", { type: "button", onclick: () => this.clearFilters() }, t("games.clear")),
          )
        : h(
            "div",
            { "data-testid": "games-empty" },
            h("p", {}, t("games.empty")),
            h("a.button", { href: "#/" }, t("games.play")),
          );
    }
    const now = this.app.conn?.now() ?? Date.now();
    const table = h(
      "table.results.games-table",
      { "data-testid": "games-table" },
      h("caption.muted", {}, t("games.caption")),
      h(
        "thead",
        {},
        h("tr", {}, ...COLUMNS.map((column) => h("th", { scope: "col" }, t(`games.column.${column}`)))),
      ),
      h("tbody", {}, ...this.games.map((game) => this.row(game, now))),
    );
    return [
      this.recordBox(now),
      h("div.table-box", {}, table),
      this.next
        ? h(
            "p",
            {},
            h(
              "button",
              {
                type: "button",
                "data-testid": "games-more",
                disabled: this.state === "more",
                onclick: () => this.load(true),
              },
              this.state === "more" ? t("games.moreLoading") : t("games.more"),
            ),
          )
        : h("p.muted", { "data-testid": "games-end" }, t("games.end")),
    ];
  }

  /**
   * One game: its row, the replay linked.
   * @param {GameLine} game
   * @param {number} now
   */
  row(game, now) {
    const { won, detail } = resultParts(game);
    return h(
      "tr",
      { "data-testid": "games-row", dataset: { room: game.room, gen: String(game.gen), kind: game.kind } },
      h(
        "td",
        {},
        h(
          "time",
          { datetime: new Date(game.ended_at).toISOString(), title: formatDateTime(game.ended_at) },
          ago(game.ended_at, now),
        ),
      ),
      h(
        "th",
        { scope: "row" },
        kindWord(game.kind),
        h("br"),
        h("small.muted", {}, describeVariant(parseVariant(game.variant))),
      ),
      h(
        "td",
        {},
        // Among several, a place says it all unless the deal was completed too.
        won || game.players === 1
          ? h(`span.badge${won ? ".won" : ""}`, {}, won ? t("games.result.won") : t("games.result.lost"))
          : null,
        detail ? [" ", h(won || game.players === 1 ? "span.muted" : "span", {}, detail)] : null,
      ),
      h("td", {}, formatNumber(game.moves)),
      h("td", {}, formatTime(game.time_ms)),
      h("td", {}, t("room.results.cards", { found: game.found })),
      h("td", {}, game.opponents.length ? opponentLinks(game.opponents) : "–"),
      h(
        "td",
        {},
        h(
          "a.button.ghost",
          { href: `#/replay/${game.room}/${game.gen}`, "data-testid": "games-replay" },
          t("common.replay"),
        ),
      ),
    );
  }
}
