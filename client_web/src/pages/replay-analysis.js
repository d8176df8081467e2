// @ts-check
/**
 * The replay page's solver analysis: per board, a verdict strip along the timeline
 * (a colour per position, a legend, the same facts as text), the move that lost the
 * game, the winning line that existed at the position shown, and "Play from here",
 * which starts a solo practice game at that position.
 *
 * The analysis comes from `GET /api/analysis/ROOM/GEN` (docs/protocol.md section 10):
 * polled while it is pending; a daily game's is withheld while its day is open.
 */

import { describeRun, lostStep, plyAt, recordMoves, verdictRuns } from "../analysis.js";
import { errorText, getJSON, h, HttpError } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { PreparedBoard } from "../replay.js" */
/** @import { AnalysisBoard, AnalysisData, ReplayData, Verdict } from "../wire.js" */

const POLL_MS = 2000;
const POLL_LIMIT = 150;
const LINE_SHOWN = 60;

/** @type {Record<Verdict, string>} */
const WORDS = { winnable: "winnable", lost: "lost", unknown: "not decided" };

export class AnalysisPanel {
  /**
   * @param {App} app
   * @param {ReplayData} data
   * @param {PreparedBoard[]} boards in the order the page shows them
   * @param {(index: number, n: number) => void} seek show board `index` after `n` moves
   * @param {() => void} [shown] called once the analysis is on the page
   */
  constructor(app, data, boards, seek, shown = () => {}) {
    this.app = app;
    this.data = data;
    this.boards = boards;
    this.seek = seek;
    this.shown = shown;
    this.from = data.from ?? 0;
    this.element = h(
      "section.panel.analysis",
      { "aria-labelledby": "analysis-title", "data-testid": "analysis" },
      h("h2#analysis-title", {}, "Solver analysis"),
    );
    this.status = h("p.muted", { "data-testid": "analysis-status", role: "status" }, "Analysing the game…");
    this.element.append(this.status);
    /** @type {{index: number, board: AnalysisBoard, cells: HTMLElement[], here: HTMLElement, play: HTMLButtonElement}[]} */
    this.parts = [];
    /** @type {number[]} */
    this.positions = boards.map(() => 0);
    this.stopped = false;
    /** @type {number | undefined} */
    this.timer = undefined;
  }

  /** Fetch the analysis, polling while it is made. */
  async load(attempt = 0) {
    if (this.stopped) return;
    const path = `/api/analysis/${encodeURIComponent(this.data.room)}/${this.data.gen}`;
    let answer;
    try {
      answer = /** @type {AnalysisData | null} */ (await getJSON(path));
    } catch (error) {
      this.status.textContent =
        error instanceof HttpError && error.status === 403
          ? "The solver's analysis of a daily game is shown once its day has closed."
          : `Could not load the analysis: ${errorText(error)}`;
      return;
    }
    if (answer === null) {
      this.element.hidden = true;
      return;
    }
    if (answer.status !== "ready") {
      if (attempt >= POLL_LIMIT) {
        this.status.textContent = "The analysis is taking long; reload the page later.";
        return;
      }
      this.timer = window.setTimeout(() => void this.load(attempt + 1), POLL_MS);
      return;
    }
    this.status.textContent =
      "Each position of the game: could it still be won (the solver found a line), was it lost (no line wins: proven), or was it not decided in time?";
    this.show(answer.boards);
  }

  destroy() {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  /** @param {AnalysisBoard[]} analysed */
  show(analysed) {
    const legend = h(
      "ul.verdict-legend",
      { "aria-label": "Legend" },
      /** @type {Verdict[]} */ (["winnable", "lost", "unknown"]).map((v) =>
        h("li", {}, h(`span.swatch.v-${v}`, { "aria-hidden": "true" }), WORDS[v]),
      ),
      h("li", {}, h("span.swatch.lost-mark", { "aria-hidden": "true" }), "the move that lost it"),
    );
    this.element.append(legend);
    this.boards.forEach((prepared, index) => {
      const board = analysed.find((b) => b.seat === prepared.seat);
      if (!board) return;
      this.parts.push(this.boardPart(index, prepared, board));
    });
    this.update(this.positions);
    this.shown();
  }

  /**
   * The winning line from board `index` after `n` moves of the replay, or null when the
   * analysis has none there.
   * @param {number} index
   * @param {number} n
   * @returns {string[] | null}
   */
  lineAt(index, n) {
    const part = this.parts.find((p) => p.index === index);
    const ply = part ? plyAt(part.board, this.from, n) : null;
    return ply && ply.verdict === "winnable" && ply.line && ply.line.length ? ply.line : null;
  }

  /**
   * @param {number} index
   * @param {PreparedBoard} prepared
   * @param {AnalysisBoard} board
   */
  boardPart(index, prepared, board) {
    const steps = prepared.views.length - 1;
    const runs = verdictRuns(board, this.from, steps);
    const lost = lostStep(board, this.from);
    const summary = runs.map(describeRun).join("; ");
    /** @type {HTMLElement[]} */
    const cells = [];
    for (let n = 0; n <= steps; n++) {
      const verdict = plyAt(board, this.from, n)?.verdict ?? "unknown";
      cells.push(
        h(`span.cell.v-${verdict}${n === lost ? ".lost-at" : ""}`, {
          "data-n": String(n),
          title: `after move ${n}: ${WORDS[verdict]}`,
        }),
      );
    }
    const strip = h(
      "div.verdict-strip",
      {
        role: "img",
        "aria-label": `Verdicts along ${prepared.name}'s game: ${summary}`,
        "data-testid": `verdict-strip-${prepared.seat}`,
        onclick: (/** @type {Event} */ event) => {
          const cell = event.target instanceof HTMLElement ? event.target.closest(".cell") : null;
          if (cell instanceof HTMLElement) this.seek(index, Number(cell.dataset.n));
        },
      },
      cells,
    );
    const lostText =
      lost === null
        ? h("p", { "data-testid": `lost-move-${prepared.seat}` }, this.noLossText(board, runs))
        : h(
            "p",
            { "data-testid": `lost-move-${prepared.seat}` },
            h("strong", {}, `The move that lost it: move ${lost} (${prepared.tokens[lost] ?? "?"}). `),
            "Before it a win was still possible. ",
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": `show-lost-${prepared.seat}`,
                onclick: () => this.seek(index, lost - 1),
              },
              "Show the winning line there",
            ),
          );
    const here = h("div.analysis-here", {
      "data-testid": `analysis-here-${prepared.seat}`,
      "aria-live": "polite",
    });
    const play = h(
      "button",
      {
        type: "button",
        "data-testid": `play-from-here-${prepared.seat}`,
        onclick: () => void this.playFromHere(index, play),
      },
      "Play from here",
    );
    this.element.append(
      h(
        "div.analysis-board",
        {},
        this.boards.length > 1 ? h("h3", {}, prepared.name) : null,
        strip,
        h("details", {}, h("summary", {}, "Verdicts as text"), h("p", {}, summary)),
        lostText,
        here,
        play,
      ),
    );
    return { index, board, cells, here, play };
  }

  /**
   * @param {AnalysisBoard} board
   * @param {{verdict: Verdict}[]} runs
   */
  noLossText(board, runs) {
    if (runs.every((r) => r.verdict === "winnable"))
      return "A win was possible at every position of this game.";
    if (runs[0]?.verdict === "lost" && board.plies[0]?.verdict === "lost")
      return "This deal could not be won from the start.";
    return "The solver did not pin down the move that lost it within its budget.";
  }

  /**
   * The replay shows each board after `positions[i]` moves.
   * @param {number[]} positions
   */
  update(positions) {
    this.positions = positions;
    for (const part of this.parts) {
      const n = positions[part.index] ?? 0;
      for (const cell of part.cells) cell.classList.toggle("current", Number(cell.dataset.n) === n);
      const ply = plyAt(part.board, this.from, n);
      const prepared = this.boards[part.index];
      const over = n === prepared.views.length - 1 && prepared.status === "won";
      part.play.disabled = over || !this.data.seed;
      part.play.title = this.data.seed ? "" : "The deal of this game is not public yet";
      if (!ply) {
        part.here.replaceChildren();
      } else if (ply.verdict === "winnable" && ply.line && ply.line.length) {
        const shown = ply.line.slice(0, LINE_SHOWN);
        part.here.replaceChildren(
          h("p", {}, `After move ${n}: winnable. A winning line from here, ${ply.line.length} moves:`),
          h(
            "ol.winning-line",
            { "aria-label": "A winning line", "data-testid": `winning-line-${prepared.seat}` },
            shown.map((token) => h("li", {}, token)),
            ply.line.length > shown.length ? h("li.muted", {}, "…") : null,
          ),
        );
      } else {
        const text = {
          winnable: "won",
          lost: "lost: no sequence of moves wins from here.",
          unknown: "not decided by the solver within its budget.",
        }[ply.verdict];
        part.here.replaceChildren(h("p", {}, `After move ${n}: ${text}`));
      }
    }
  }

  /**
   * Start a solo practice game at the position board `index` is shown at.
   * @param {number} index
   * @param {HTMLButtonElement} button
   */
  async playFromHere(index, button) {
    const prepared = this.boards[index];
    const n = this.positions[index] ?? 0;
    const seed = this.data.seed;
    if (!seed) return;
    button.disabled = true;
    try {
      // The record holds the moves before the replay's start too (a game from a position).
      const results = /** @type {{ranking: {seat: number, record: string}[]} | null} */ (
        await getJSON(`/api/results/${encodeURIComponent(this.data.room)}/${this.data.gen}`)
      );
      const row = results?.ranking.find((r) => r.seat === prepared.seat);
      if (!row) throw new Error("the game's record is not available");
      const moves = recordMoves(row.record).slice(0, this.from + n);
      const conn = await this.app.ready();
      const reply = await conn.request({
        t: "create",
        kind: "solo",
        variant: this.data.variant,
        seed,
        moves,
      });
      this.app.navigate(`#/room/${reply.room}`);
    } catch (error) {
      button.disabled = false;
      button.after(h("p.error-text", { role: "alert" }, `Could not start the game: ${errorText(error)}`));
    }
  }
}
