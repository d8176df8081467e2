// @ts-check
/**
 * A daily game's replay: each board's moves against the day's par and its time against
 * the leader's, from `GET /api/daily/DATE/SLUG/leaderboard?limit=1` (its `par` and its
 * first row). Also the title bar the daily and replay pages share. Every text is the
 * catalog's (`replay.daily.*`).
 */

import { t } from "../i18n.js";
import { formatTime, getJSON, h } from "../ui.js";

/** @import { Child } from "../ui.js" */
/** @import { PreparedBoard } from "../replay.js" */
/** @import { DailyLeaderboard, DailyRow, ReplayData } from "../wire.js" */

/**
 * A page's title bar: its title, a muted line under it, and what goes on its right.
 * @param {Child} title
 * @param {Child} subtitle
 * @param {...Child} end
 */
export function titleBar(title, subtitle, ...end) {
  return h(
    "div.statusbar",
    {},
    h("div", {}, h("h1", { style: "margin:0;font-size:1.2rem" }, title), h("span.muted", {}, subtitle)),
    ...end,
  );
}

/**
 * "+8" / "−3" / "±0": a signed difference.
 * @param {number} n
 */
function signed(n) {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0";
}

/**
 * One board's line: moves vs par, time vs the leader (null fields are left out).
 * @param {{name: string, moves: number, won: boolean, time_ms: number | null}} board
 * @param {number | null} par
 * @param {DailyRow | null} leader
 */
export function compareLine(board, par, leader) {
  const parts = [
    par === null
      ? t("replay.daily.moves", { moves: board.moves })
      : t("replay.daily.movesPar", { moves: board.moves, par, diff: signed(board.moves - par) }),
  ];
  if (board.won && board.time_ms !== null) {
    const time = formatTime(board.time_ms, { tenths: true });
    if (leader && leader.won && leader.time_ms !== null) {
      const behind = board.time_ms - leader.time_ms;
      const gap = `${behind > 0 ? "+" : "−"}${formatTime(Math.abs(behind), { tenths: true })}`;
      parts.push(
        behind === 0
          ? t("replay.daily.timeLeader", { time, leader: leader.name })
          : t("replay.daily.timeGap", { time, gap, leader: leader.name }),
      );
    } else {
      parts.push(t("replay.daily.time", { time }));
    }
  } else {
    parts.push(t("replay.daily.notWon"));
  }
  return t("replay.daily.line", { name: board.name, parts: parts.join(" · ") });
}

/**
 * The comparison panel of a daily game's replay, filled once the leaderboard answers;
 * `relabel` draws it again in the active language.
 */
export class DailyComparison {
  /**
   * @param {ReplayData} data a daily game's replay (`data.daily` set)
   * @param {PreparedBoard[]} boards
   */
  constructor(data, boards) {
    this.boards = boards;
    /** @type {{state: "loading"} | {state: "failed"} | {state: "loaded", par: number | null, leader: DailyRow | null}} */
    this.answer = { state: "loading" };
    this.element = h("section.panel", { "data-testid": "daily-compare" });
    this.relabel();
    const daily = data.daily;
    if (!daily) return;
    const slug = daily.variant.replace(/=/g, "").replace(/ /g, "-");
    void (async () => {
      try {
        const answer = /** @type {DailyLeaderboard | null} */ (
          await getJSON(`/api/daily/${daily.date}/${slug}/leaderboard?limit=1`)
        );
        this.answer = { state: "loaded", par: answer?.par ?? null, leader: answer?.rows[0] ?? null };
      } catch {
        this.answer = { state: "failed" };
      }
      this.relabel();
    })();
  }

  relabel() {
    const answer = this.answer;
    this.element.setAttribute("aria-label", t("replay.daily.title"));
    if (answer.state === "loading") {
      this.element.replaceChildren(h("p.muted", {}, t("replay.daily.loading")));
    } else if (answer.state === "failed") {
      this.element.replaceChildren(h("p.muted", {}, t("replay.daily.unavailable")));
    } else {
      this.element.replaceChildren(
        h("h2", {}, t("replay.daily.title")),
        ...this.boards.map((board) =>
          h(
            "p",
            { "data-testid": `daily-compare-${board.seat}` },
            compareLine(
              {
                name: board.name,
                moves: board.moves,
                won: board.status === "won",
                time_ms: board.time_ms ?? null,
              },
              answer.par,
              answer.leader,
            ),
          ),
        ),
      );
    }
  }
}

/**
 * The comparison panel of a daily game's replay; null for other games.
 * @param {ReplayData} data
 * @param {PreparedBoard[]} boards
 */
export function dailyComparison(data, boards) {
  return data.daily ? new DailyComparison(data, boards) : null;
}
