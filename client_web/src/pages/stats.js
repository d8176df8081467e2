// @ts-check
/**
 * Your statistics (`#/stats`): per kind of game and variant, games played and won, the
 * win rate, best time, fewest moves, current and best streak, and your recent games;
 * from `GET /api/me/stats` (docs/protocol.md section 10). Also the pieces the home page
 * shows: the one-line summary.
 */

import { describeVariant, parseVariant } from "../rules.js";
import { errorText, formatTime, getJSON, h, statusWord } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { PlayerStats, RecentGame, StatsCategory, StatsTotals } from "../wire.js" */

/** @type {Record<string, string>} */
const KIND_WORDS = {
  solo: "Solo",
  race: "Race",
  race_machine: "Race vs machine",
  daily: "Daily challenge",
};

/**
 * A kind of game in words.
 * @param {string} kind
 */
export function kindWord(kind) {
  return KIND_WORDS[kind] ?? kind;
}

/**
 * A win rate (0..1) as a whole percentage.
 * @param {number} rate
 */
export function percent(rate) {
  return `${Math.round(rate * 100)}%`;
}

/**
 * The home page's line: games played and won, and the win rate.
 * @param {StatsTotals} totals
 */
export function summaryText(totals) {
  if (!totals.played) return "No games finished yet.";
  const games = `${totals.played} game${totals.played === 1 ? "" : "s"}`;
  return `${games} played · ${totals.won} won (${percent(totals.win_rate)})`;
}

/**
 * How a recent game ended for you.
 * @param {RecentGame} game
 */
export function outcomeText(game) {
  if (game.won) return `won in ${formatTime(game.time_ms)}`;
  if (game.players > 1) return `placed ${game.rank} of ${game.players}`;
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
    h("td", {}, String(c.played)),
    h("td", {}, String(c.won)),
    h("td", {}, percent(c.win_rate)),
    h("td", {}, c.best_ms === null ? "–" : formatTime(c.best_ms)),
    h("td", {}, c.fewest_moves === null ? "–" : String(c.fewest_moves)),
    h("td", {}, String(c.streak)),
    h("td", {}, String(c.best_streak)),
  );
}

export class StatsPage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    this.body = h("div", { "data-testid": "stats-page" }, h("p.muted", {}, "Loading…"));
  }

  /** @param {HTMLElement} root */
  mount(root) {
    root.append(
      h(
        "section.panel",
        { "aria-labelledby": "stats-title" },
        h("h1", { id: "stats-title", style: "margin:0 0 0.75rem;font-size:1.3rem" }, "Your statistics"),
        this.body,
        h("p", {}, h("a", { href: "#/" }, "← Home")),
      ),
    );
    this.load();
  }

  unmount() {}

  async load() {
    try {
      await this.app.ready(); // a token first: the answer is yours
      const stats = /** @type {PlayerStats | null} */ (await getJSON("/api/me/stats"));
      this.body.replaceChildren(...(stats ? this.render(stats) : [h("p", {}, "No statistics yet.")]));
    } catch (error) {
      this.body.replaceChildren(h("p.error-text", {}, `Could not load your statistics: ${errorText(error)}`));
    }
  }

  /** @param {PlayerStats} stats */
  render(stats) {
    if (!stats.categories.length)
      return [h("p", { "data-testid": "stats-empty" }, "No games finished yet: play one and come back.")];
    const table = h(
      "table.results.stats-table",
      { "data-testid": "stats-table" },
      h("caption.muted", { style: "text-align:left" }, summaryText(stats.totals)),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Game", "Played", "Won", "Win rate", "Best time", "Fewest moves", "Streak", "Best streak"].map(
            (label) => h("th", { scope: "col" }, label),
          ),
        ),
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
            `${kindWord(game.kind)} · ${describeVariant(parseVariant(game.variant))} · ${outcomeText(game)} · ${game.moves} move${game.moves === 1 ? "" : "s"}`,
          ),
          h("a.button.ghost", { href: `#/replay/${game.room}/${game.gen}` }, "Replay"),
        ),
      ),
    );
    return [
      h("div", { style: "overflow-x:auto" }, table),
      h("h2", { style: "margin:1rem 0 0.5rem;font-size:1.1rem" }, "Recent games"),
      recent,
    ];
  }
}
