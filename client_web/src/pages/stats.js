// @ts-check
/**
 * Your statistics (`#/stats`): per kind of game and variant, games played and won, the
 * win rate, best time, fewest moves, current and best streak, and your recent games;
 * from `GET /api/me/stats` (docs/protocol.md section 10). Also the pieces the home page
 * shows: the one-line summary. Every text is the catalog's (`stats.*`); `relabel` draws
 * the page again from the statistics it holds.
 */

import { formatNumber, has, t } from "../i18n.js";
import { describeVariant, parseVariant } from "../rules.js";
import { errorText, formatTime, getJSON, h, rerender, statusWord } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { PlayerStats, RecentGame, StatsCategory, StatsTotals } from "../wire.js" */

/**
 * A kind of game in words (`stats.kind.*`: solo, race, race_machine, daily).
 * @param {string} kind
 */
export function kindWord(kind) {
  return has(`stats.kind.${kind}`) ? t(`stats.kind.${kind}`) : kind;
}

/**
 * A win rate (0..1) as a whole percentage, as the active language writes one.
 * @param {number} rate
 */
export function percent(rate) {
  return formatNumber(rate, { style: "percent", maximumFractionDigits: 0 });
}

/**
 * The home page's line: games played and won, and the win rate.
 * @param {StatsTotals} totals
 */
export function summaryText(totals) {
  if (!totals.played) return t("stats.none");
  return t("stats.summary", { played: totals.played, won: totals.won, rate: percent(totals.win_rate) });
}

/**
 * How a recent game ended for you.
 * @param {RecentGame} game
 */
export function outcomeText(game) {
  if (game.won) return t("stats.outcome.won", { time: formatTime(game.time_ms) });
  if (game.players > 1) return t("stats.outcome.placed", { rank: game.rank, players: game.players });
  return statusWord(game.status);
}

/**
 * One table row per kind and variant.
 * @param {StatsCategory} c
 */
function categoryRow(c) {
  return h(
    "tr",
    { "data-testid": `stats-${c.kind}` },
    h("th", { scope: "row" }, `${kindWord(c.kind)} · ${describeVariant(parseVariant(c.variant))}`),
    h("td", {}, formatNumber(c.played)),
    h("td", {}, formatNumber(c.won)),
    h("td", {}, percent(c.win_rate)),
    h("td", {}, c.best_ms === null ? "–" : formatTime(c.best_ms)),
    h("td", {}, c.fewest_moves === null ? "–" : formatNumber(c.fewest_moves)),
    h("td", {}, formatNumber(c.streak)),
    h("td", {}, formatNumber(c.best_streak)),
  );
}

/** The table's columns, in order: keys of `stats.column`. */
const COLUMNS = ["game", "played", "won", "winRate", "bestTime", "fewestMoves", "streak", "bestStreak"];

export class StatsPage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    /** @type {HTMLElement | null} */
    this.root = null;
    /**
     * What the page shows: still loading, your statistics (null: none yet), or why they
     * could not be loaded.
     * @type {{state: "loading"} | {state: "loaded", stats: PlayerStats | null} | {state: "failed", error: unknown}}
     */
    this.shown = { state: "loading" };
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    root.append(this.build());
    this.load();
  }

  unmount() {}

  /** The page again in the active language. */
  relabel() {
    if (this.root) rerender(this.root, () => this.build());
  }

  async load() {
    try {
      await this.app.ready(); // a token first: the answer is yours
      const stats = /** @type {PlayerStats | null} */ (await getJSON("/api/me/stats"));
      this.shown = { state: "loaded", stats };
    } catch (error) {
      this.shown = { state: "failed", error };
    }
    this.relabel();
  }

  /** The page's content in the active language. */
  build() {
    const shown = this.shown;
    const body =
      shown.state === "loading"
        ? [h("p.muted", {}, t("stats.loading"))]
        : shown.state === "failed"
          ? [h("p.error-text", {}, t("stats.loadFailed", { reason: errorText(shown.error) }))]
          : shown.stats
            ? this.render(shown.stats)
            : [h("p", {}, t("stats.empty"))];
    return h(
      "section.panel",
      { "aria-labelledby": "stats-title" },
      h("h1", { id: "stats-title", style: "margin:0 0 0.75rem;font-size:1.3rem" }, t("stats.title")),
      h("div", { "data-testid": "stats-page" }, body),
      h("p", {}, h("a", { href: "#/" }, t("stats.home"))),
    );
  }

  /** @param {PlayerStats} stats */
  render(stats) {
    if (!stats.categories.length) return [h("p", { "data-testid": "stats-empty" }, t("stats.noGames"))];
    const table = h(
      "table.results.stats-table",
      { "data-testid": "stats-table" },
      h("caption.muted", { style: "text-align:left" }, summaryText(stats.totals)),
      h(
        "thead",
        {},
        h("tr", {}, ...COLUMNS.map((column) => h("th", { scope: "col" }, t(`stats.column.${column}`)))),
      ),
      h("tbody", {}, ...stats.categories.map(categoryRow)),
    );
    const recent = h(
      "ul.list",
      { "data-testid": "stats-recent" },
      ...stats.recent.map((game) =>
        h(
          "li",
          {},
          h(
            "span",
            {},
            t("stats.recent.row", {
              kind: kindWord(game.kind),
              variant: describeVariant(parseVariant(game.variant)),
              outcome: outcomeText(game),
              moves: game.moves,
            }),
          ),
          h("a.button.ghost", { href: `#/replay/${game.room}/${game.gen}` }, t("common.replay")),
        ),
      ),
    );
    return [
      h("div", { style: "overflow-x:auto" }, table),
      h("h2", { style: "margin:1rem 0 0.5rem;font-size:1.1rem" }, t("stats.recent.title")),
      recent,
      h("p", {}, h("a", { href: "#/me/games", "data-testid": "stats-games-link" }, t("stats.recent.all"))),
    ];
  }
}
