// @ts-check
/**
 * The replay page's solver analysis: per board, a verdict strip along the timeline
 * (a colour per position, a legend, the same facts as text), the move that lost the
 * game, the winning line that existed at the position shown, and "Play from here",
 * which starts a solo practice game at that position.
 *
 * The analysis comes from `GET /api/analysis/ROOM/GEN` (docs/protocol.md section 10):
 * polled while it is pending; a daily game's is withheld while its day is open.
 * Every text is the catalog's (`replay.analysis.*`); `relabel` draws the panel again.
 */

import { describeRun, lostStep, plyAt, recordMoves, verdictRuns } from "../analysis.js";
import { t } from "../i18n.js";
import { errorText, getJSON, h, HttpError, rerender } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { PreparedBoard } from "../replay.js" */
/** @import { AnalysisBoard, AnalysisData, ReplayData, Verdict } from "../wire.js" */

const POLL_MS = 2000;
const POLL_LIMIT = 150;
const LINE_SHOWN = 60;

/** @type {Verdict[]} */
const VERDICTS = ["winnable", "lost", "unknown"];

/**
 * A verdict in a word: winnable, lost, not decided.
 * @param {Verdict} verdict
 */
function verdictWord(verdict) {
  return t(`replay.analysis.verdict.${verdict}`);
}

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
    this.element = h("section.panel.analysis", {
      "aria-labelledby": "analysis-title",
      "data-testid": "analysis",
    });
    this.status = h("p.muted", { "data-testid": "analysis-status", role: "status" });
    /** What the status line says: a message of `replay.analysis` and its values. */
    /** @type {{key: string, values?: Record<string, string>}} */
    this.said = { key: "analysing" };
    /** @type {AnalysisBoard[] | null} the analysis, once ready */
    this.analysed = null;
    /** @type {Map<number, unknown>} why "Play from here" failed, by board index */
    this.failures = new Map();
    /** @type {{index: number, board: AnalysisBoard, cells: HTMLElement[], here: HTMLElement, play: HTMLButtonElement, element: HTMLElement}[]} */
    this.parts = [];
    /** @type {number[]} */
    this.positions = boards.map(() => 0);
    this.stopped = false;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.element.append(...this.build());
  }

  /**
   * Say `key` (of `replay.analysis`) in the status line.
   * @param {string} key
   * @param {Record<string, string>} [values]
   */
  say(key, values) {
    this.said = { key, values };
    this.status.textContent = t(`replay.analysis.${key}`, values);
  }

  /** The panel's content in the active language, from what it holds. */
  build() {
    this.status.textContent = t(`replay.analysis.${this.said.key}`, this.said.values);
    /** @type {Node[]} */
    const nodes = [h("h2#analysis-title", {}, t("replay.analysis.title")), this.status];
    this.parts = [];
    const analysed = this.analysed;
    if (!analysed) return nodes;
    nodes.push(
      h(
        "ul.verdict-legend",
        { "aria-label": t("replay.analysis.legend") },
        VERDICTS.map((v) => h("li", {}, h(`span.swatch.v-${v}`, { "aria-hidden": "true" }), verdictWord(v))),
        h("li", {}, h("span.swatch.lost-mark", { "aria-hidden": "true" }), t("replay.analysis.lostMark")),
      ),
    );
    this.boards.forEach((prepared, index) => {
      const board = analysed.find((b) => b.seat === prepared.seat);
      if (!board) return;
      const part = this.boardPart(index, prepared, board);
      this.parts.push(part);
      nodes.push(part.element);
    });
    return nodes;
  }

  /** The panel again in the active language, keeping the focus. */
  relabel() {
    rerender(this.element, () => {
      const fragment = document.createDocumentFragment();
      fragment.append(...this.build());
      return fragment;
    });
    this.update(this.positions);
  }

  /** Fetch the analysis, polling while it is made. */
  async load(attempt = 0) {
    if (this.stopped) return;
    const path = `/api/analysis/${encodeURIComponent(this.data.room)}/${this.data.gen}`;
    let answer;
    try {
      answer = /** @type {AnalysisData | null} */ (await getJSON(path));
    } catch (error) {
      if (error instanceof HttpError && error.status === 403) this.say("withheld");
      else this.say("loadFailed", { reason: errorText(error) });
      return;
    }
    if (answer === null) {
      this.element.hidden = true;
      return;
    }
    if (answer.status !== "ready") {
      if (attempt >= POLL_LIMIT) {
        this.say("slow");
        return;
      }
      this.timer = window.setTimeout(() => void this.load(attempt + 1), POLL_MS);
      return;
    }
    this.said = { key: "intro" };
    this.show(answer.boards);
  }

  destroy() {
    this.stopped = true;
    window.clearTimeout(this.timer);
  }

  /** @param {AnalysisBoard[]} analysed */
  show(analysed) {
    this.analysed = analysed;
    this.element.replaceChildren(...this.build());
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
          title: t("replay.analysis.cell", { n, verdict: verdictWord(verdict) }),
        }),
      );
    }
    const strip = h(
      "div.verdict-strip",
      {
        role: "img",
        "aria-label": t("replay.analysis.strip", { name: prepared.name, summary }),
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
            h("strong", {}, t("replay.analysis.lostAt", { n: lost, token: prepared.tokens[lost] ?? "?" })),
            " ",
            t("replay.analysis.lostBefore"),
            " ",
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": `show-lost-${prepared.seat}`,
                onclick: () => this.seek(index, lost - 1),
              },
              t("replay.analysis.showThere"),
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
      t("replay.analysis.playHere"),
    );
    const failure = this.failures.get(index);
    const element = h(
      "div.analysis-board",
      {},
      this.boards.length > 1 ? h("h3", {}, prepared.name) : null,
      strip,
      h("details", {}, h("summary", {}, t("replay.analysis.asText")), h("p", {}, summary)),
      lostText,
      here,
      play,
      failure === undefined ? null : this.failureText(failure),
    );
    return { index, board, cells, here, play, element };
  }

  /**
   * @param {AnalysisBoard} board
   * @param {{verdict: Verdict}[]} runs
   */
  noLossText(board, runs) {
    if (runs.every((r) => r.verdict === "winnable")) return t("replay.analysis.allWinnable");
    if (runs[0]?.verdict === "lost" && board.plies[0]?.verdict === "lost")
      return t("replay.analysis.lostFromStart");
    return t("replay.analysis.undecided");
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
      part.play.title = this.data.seed ? "" : t("replay.analysis.notPublic");
      if (!ply) {
        part.here.replaceChildren();
      } else if (ply.verdict === "winnable" && ply.line && ply.line.length) {
        const shown = ply.line.slice(0, LINE_SHOWN);
        part.here.replaceChildren(
          h("p", {}, t("replay.analysis.winnableHere", { n, length: ply.line.length })),
          h(
            "ol.winning-line",
            {
              "aria-label": t("replay.analysis.winningLine"),
              "data-testid": `winning-line-${prepared.seat}`,
            },
            shown.map((token) => h("li", {}, token)),
            ply.line.length > shown.length ? h("li.muted", {}, "…") : null,
          ),
        );
      } else {
        part.here.replaceChildren(h("p", {}, t(`replay.analysis.here.${ply.verdict}`, { n })));
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
    this.failures.delete(index);
    button.parentElement?.querySelector("[data-failure]")?.remove();
    try {
      // The record holds the moves before the replay's start too (a game from a position).
      const results = /** @type {{ranking: {seat: number, record: string}[]} | null} */ (
        await getJSON(`/api/results/${encodeURIComponent(this.data.room)}/${this.data.gen}`)
      );
      const row = results?.ranking.find((r) => r.seat === prepared.seat);
      if (!row) throw new Error(t("replay.analysis.noRecord"));
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
      this.failures.set(index, error);
      button.after(this.failureText(error));
    }
  }

  /**
   * Why "Play from here" failed.
   * @param {unknown} error
   */
  failureText(error) {
    return h(
      "p.error-text",
      { role: "alert", "data-failure": "" },
      t("replay.analysis.playFailed", { reason: errorText(error) }),
    );
  }
}
