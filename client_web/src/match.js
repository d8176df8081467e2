// @ts-check
/**
 * A match of several deals, as the pages show it: the score line a match's room shows
 * throughout (lobby, each deal, between deals, the end) and the match's results table
 * (each deal's winner and time, links to the deals' replays, the final score), for the
 * room page at a match's end and the match page (`#/match/ROOM/GEN`). Plain functions
 * from data to text and elements: no state, nothing sent. Every text is the catalog's
 * (`match.*`).
 */

import { formatNumber, t } from "./i18n.js";
import { formatTime, h } from "./ui.js";
import { labelled } from "./pages/bots.js";

/** @import { MatchDeal, MatchRecord, MatchSummary, RoomFrame } from "./wire.js" */

/**
 * The players of a match with their deals won, in seat order.
 * @param {{seat: number, name: string, bot?: boolean, level?: string}[]} players
 * @param {number[]} score
 */
function scoreText(players, score) {
  return players
    .map((p) => t("match.playerScore", { name: labelled(p), won: score[p.seat] ?? 0 }))
    .join(" · ");
}

/**
 * The name of seat `seat` among `players`, or null.
 * @param {{seat: number, name: string, bot?: boolean, level?: string}[]} players
 * @param {number | null | undefined} seat
 */
function nameOf(players, seat) {
  const player = players.find((p) => p.seat === seat);
  return player ? labelled(player) : null;
}

/**
 * What a match stands at, in words: who won it (or that nobody did, or who left), or
 * the deal being played, or the wait for the next one.
 * @param {MatchSummary} match
 * @param {{seat: number, name: string, bot?: boolean, level?: string}[]} players
 * @param {{state: string, now: number}} at
 */
export function matchStatus(match, players, { state, now }) {
  const winner = nameOf(players, match.winner);
  const left = nameOf(players, match.forfeit);
  if (match.over) {
    if (left && winner) return t("match.wonForfeit", { name: winner, left });
    if (left) return t("match.drawnForfeit", { left });
    return winner ? t("match.won", { name: winner }) : t("match.drawn");
  }
  const deal = match.deals.length + (state === "finished" ? 0 : 1);
  if (state === "finished" && match.next_at)
    return t("match.next", { seconds: Math.max(0, Math.ceil((match.next_at - now) / 1000)) });
  return t("match.deal", { n: deal });
}

/**
 * The score line of a match's room (null for a room that is no match): in the lobby,
 * what the match is; from its first deal, the score and where it stands.
 * @param {RoomFrame} room
 * @param {number} now the server's clock (ms)
 */
export function matchLine(room, now) {
  const bestOf = room.best_of ?? 1;
  if (bestOf <= 1) return null;
  const title = t("match.bestOf", { n: bestOf, need: Math.floor(bestOf / 2) + 1 });
  const match = room.match;
  const players = room.seats.flatMap((s) => (s ? [s] : []));
  const parts = [h("strong", {}, title)];
  if (match) {
    parts.push(
      h("span", { "data-testid": "match-score" }, scoreText(players, match.score)),
      h("span", { "data-testid": "match-status" }, matchStatus(match, players, { state: room.state, now })),
    );
  }
  return h(
    "p.match-line",
    { "data-testid": "match" },
    ...parts.flatMap((part, i) => (i ? [" · ", part] : [part])),
  );
}

/**
 * A deal's winner and how: the finisher's time, else the cards home; "drawn".
 * @param {MatchDeal} deal
 * @param {MatchRecord["players"]} players
 */
function dealOutcome(deal, players) {
  if (deal.winner === null) return t("match.dealDrawn");
  const row = deal.ranking.find((r) => r.seat === deal.winner);
  const name = nameOf(players, deal.winner) ?? "";
  if (row && row.time_ms !== null && row.status === "won")
    return t("match.dealWonTime", { name, time: formatTime(row.time_ms, { tenths: true }) });
  return t("match.dealWonHome", { name, found: row ? row.found : 0 });
}

/**
 * A match's results: the final score (or the score so far), each deal's winner with a
 * link to its replay.
 * @param {MatchRecord} record
 */
export function matchResults(record) {
  const players = record.players;
  const rows = record.deals.map((deal, i) =>
    h(
      "tr",
      { "data-testid": "match-deal" },
      h("td", {}, formatNumber(i + 1)),
      h("td", {}, dealOutcome(deal, players)),
      h(
        "td",
        {},
        h(
          "a",
          {
            href: `#/replay/${encodeURIComponent(record.room)}/${deal.gen}`,
            "aria-label": t("match.replayLabel", { n: i + 1 }),
          },
          t("common.replay"),
        ),
      ),
    ),
  );
  const summary = /** @type {MatchSummary} */ ({ ...record, deals: record.deals.map((d) => d.winner) });
  return h(
    "section.panel",
    { "data-testid": "match-results" },
    h("h2", {}, t("match.results", { n: record.best_of })),
    h("p", { "data-testid": "match-final" }, scoreText(players, record.score)),
    h(
      "p",
      {},
      record.over ? matchStatus(summary, players, { state: "finished", now: 0 }) : t("match.unfinished"),
    ),
    h(
      "table.results",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["deal", "outcome", "replay"].map((key) => h("th", { scope: "col" }, t(`match.head.${key}`))),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
}
