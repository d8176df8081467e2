// @ts-check
/**
 * A daily game's replay: each board's moves against the day's par and its time against
 * the leader's, from `GET /api/daily/DATE/SLUG/leaderboard?limit=1` (its `par` and its
 * first row).
 */

import { formatTime, getJSON, h } from "../ui.js";

/** @import { PreparedBoard } from "../replay.js" */
/** @import { DailyLeaderboard, DailyRow, ReplayData } from "../wire.js" */

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
  const parts = [];
  parts.push(
    par === null ? `${board.moves} moves` : `${board.moves} moves (par ${par}, ${signed(board.moves - par)})`,
  );
  if (board.won && board.time_ms !== null) {
    if (leader && leader.won && leader.time_ms !== null) {
      const behind = board.time_ms - leader.time_ms;
      const gap =
        behind === 0
          ? "the leader's time"
          : `${behind > 0 ? "+" : "−"}${formatTime(Math.abs(behind), { tenths: true })} on the leader`;
      parts.push(`time ${formatTime(board.time_ms, { tenths: true })} (${gap}, ${leader.name})`);
    } else {
      parts.push(`time ${formatTime(board.time_ms, { tenths: true })}`);
    }
  } else {
    parts.push("not won");
  }
  return `${board.name}: ${parts.join(" · ")}`;
}

/**
 * The comparison panel of a daily game's replay, filled once the leaderboard answers;
 * null for other games.
 * @param {ReplayData} data
 * @param {PreparedBoard[]} boards
 */
export function dailyComparison(data, boards) {
  const daily = data.daily;
  if (!daily) return null;
  const panel = h(
    "section.panel",
    { "aria-label": "Against par and the leader", "data-testid": "daily-compare" },
    h("p.muted", {}, "Loading the day's par and leader…"),
  );
  const slug = daily.variant.replace(/=/g, "").replace(/ /g, "-");
  void (async () => {
    try {
      const answer = /** @type {DailyLeaderboard | null} */ (
        await getJSON(`/api/daily/${daily.date}/${slug}/leaderboard?limit=1`)
      );
      const par = answer?.par ?? null;
      const leader = answer?.rows[0] ?? null;
      panel.replaceChildren(
        h("h2", {}, "Against par and the leader"),
        ...boards.map((board) =>
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
              par,
              leader,
            ),
          ),
        ),
      );
    } catch {
      panel.replaceChildren(h("p.muted", {}, "The day's par and leader are not available."));
    }
  })();
  return panel;
}
