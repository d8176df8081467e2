// @ts-check
/**
 * A finished game by link: every board stepping through its moves in sync, with play
 * and pause, speed, a time slider, single steps and a jump to any move. Where the solver
 * found a winning line, a board can show it step by step as ghost cards (line.js).
 */

import { BoardView } from "../board.js";
import { dealStock, playLine, stockAt } from "../line.js";
import { START, eventTimes, movesAt, nextTime, prepareBoard, previousTime } from "../replay.js";
import { describeVariant, parseVariant } from "../rules.js";
import { AnalysisPanel } from "./replay-analysis.js";
import { labelled } from "./bots.js";
import { dailyComparison } from "./replay-daily.js";
import { control, errorText, formatTime, getJSON, h, statusWord } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { PreparedBoard } from "../replay.js" */
/** @import { ReplayData } from "../wire.js" */
/** @import { LineStep } from "../line.js" */
/** @import { Card } from "../cards.js" */

const FRAME_MS = 50;

export class ReplayPage {
  /**
   * @param {App} app
   * @param {string} roomId
   * @param {number} gen
   */
  constructor(app, roomId, gen) {
    this.app = app;
    this.roomId = roomId;
    this.gen = gen;
    /** @type {Replayer | null} */
    this.replayer = null;
  }

  /** @param {HTMLElement} root */
  async mount(root) {
    root.append(h("p.loading", {}, "Loading the replay…"));
    let data;
    try {
      data = /** @type {ReplayData | null} */ (
        await getJSON(`/api/replay/${encodeURIComponent(this.roomId)}/${this.gen}`)
      );
    } catch (error) {
      root.replaceChildren(h("p.error-text", {}, `Could not load the replay: ${errorText(error)}`));
      return;
    }
    if (!data) {
      root.replaceChildren(
        h("p", {}, "This game is not finished or does not exist. ", h("a", { href: "#/" }, "Back home")),
      );
      return;
    }
    this.replayer = new Replayer(root, data, this.app);
  }

  unmount() {
    this.replayer?.destroy();
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    this.replayer?.onKey(event);
  }
}

/** A loaded replay on screen: its boards, its controls and its clock. */
class Replayer {
  /**
   * @param {HTMLElement} root
   * @param {ReplayData} data
   * @param {App} app
   */
  constructor(root, data, app) {
    this.data = data;
    this.t = START;
    /** @type {{wall: number, t: number} | null} */
    this.playingSince = null;
    this.speed = 4;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.variant = parseVariant(data.variant);
    this.boards = data.boards.map(prepareBoard).sort((a, b) => a.rank - b.rank || a.seat - b.seat);
    this.stops = eventTimes(this.boards);
    this.end = this.stops[this.stops.length - 1];
    this.slider = h("input", {
      type: "range",
      min: "0",
      max: String(this.end),
      value: "0",
      step: "1",
      "aria-label": "Time",
      "data-testid": "replay-slider",
      oninput: () => {
        this.seek(Number(this.slider.value));
      },
    });
    this.playButton = h(
      "button",
      { type: "button", "data-testid": "replay-play", onclick: () => this.toggle() },
      "Play",
    );
    this.clock = h("span.muted", {
      "data-testid": "replay-clock",
      style: "font-variant-numeric:tabular-nums",
    });
    const speed = h(
      "select",
      {
        "aria-label": "Speed",
        onchange: () => {
          this.setSpeed(Number(speed.value));
        },
      },
      [1, 2, 4, 8, 16].map((s) => h("option", { value: String(s), selected: s === this.speed }, `${s}×`)),
    );
    this.boardSelect = h(
      "select",
      { "aria-label": "Board to jump in" },
      this.boards.map((b, i) =>
        h("option", { value: String(i) }, b.name ? labelled(b) : `Seat ${b.seat + 1}`),
      ),
    );
    const jump = h(
      "form.row",
      { onsubmit: (e) => this.jump(e) },
      h(
        "label",
        {},
        "Move ",
        h("input", {
          name: "move",
          type: "number",
          min: "0",
          style: "width:5rem",
          "data-testid": "replay-move",
        }),
      ),
      this.boards.length > 1 ? this.boardSelect : null,
      h("button.ghost", { type: "submit" }, "Go"),
    );
    const grid = h("div.boards", { "data-testid": "boards" });
    /** The deal's stock, top first: what a winning line's turns of the stock show. */
    this.dealStock = data.deal ? dealStock(data.deal) : null;
    /** A winning line shown on board `index` (from its move `n`), at its move `k`. */
    /** @type {{index: number, n: number, steps: LineStep[], length: number, k: number} | null} */
    this.ghost = null;
    /** @type {{board: PreparedBoard, header: HTMLElement, bar: HTMLElement, holder: HTMLElement, view: BoardView}[]} */
    this.entries = this.boards.map((board) => {
      const holder = h("div");
      const header = h("header");
      const bar = h("div.ghost-bar", { "data-testid": `ghost-bar-${board.seat}` });
      grid.append(
        h(
          "article.watched",
          { "aria-label": `${board.name}'s board`, "data-testid": `board-${board.seat}` },
          header,
          bar,
          holder,
        ),
      );
      return {
        board,
        header,
        bar,
        holder,
        view: new BoardView(holder, { variant: this.variant, label: `${board.name}'s board` }),
      };
    });
    /** A board shown after exactly `n` moves (moves made in the same instant share a time). */
    /** @type {{board: PreparedBoard, n: number} | null} */
    this.pinned = null;
    this.analysis = new AnalysisPanel(
      app,
      data,
      this.boards,
      (index, n) => this.seekMove(index, n),
      () => this.show(),
    );
    const when = this.data.ended_at ? new Date(this.data.ended_at).toLocaleString() : "";
    root.replaceChildren(
      h(
        "section.game",
        {},
        h(
          "div.statusbar",
          {},
          h(
            "div",
            {},
            h(
              "h1",
              { style: "margin:0;font-size:1.2rem" },
              `Replay · ${this.data.kind === "solo" ? "Solo" : "Race"} · ${describeVariant(this.variant)}`,
            ),
            h("span.muted", {}, `${when} · seed ${this.data.seed}`),
          ),
        ),
        h(
          "div.panel.controls",
          {},
          h(
            "button.ghost",
            { type: "button", "aria-label": "To the start", onclick: () => this.seek(START) },
            "|◀",
          ),
          h(
            "button.ghost",
            {
              type: "button",
              "aria-label": "Step back",
              "data-testid": "replay-back",
              onclick: () => this.seek(previousTime(this.stops, this.t)),
            },
            "◀",
          ),
          this.playButton,
          h(
            "button.ghost",
            {
              type: "button",
              "aria-label": "Step forward",
              "data-testid": "replay-step",
              onclick: () => this.seek(nextTime(this.stops, this.t)),
            },
            "▶",
          ),
          h(
            "button.ghost",
            { type: "button", "aria-label": "To the end", onclick: () => this.seek(this.end) },
            "▶|",
          ),
          speed,
          this.slider,
          this.clock,
          jump,
        ),
        grid,
        dailyComparison(data, this.boards),
        this.analysis.element,
      ),
    );
    this.show();
    void this.analysis.load();
  }

  destroy() {
    this.analysis.destroy();
    window.clearInterval(this.timer);
    for (const entry of this.entries) entry.view.destroy();
  }

  /**
   * Show board `index` after exactly `n` moves (the others at that time).
   * @param {number} index
   * @param {number} n
   */
  seekMove(index, n) {
    const board = this.boards[index];
    const move = Math.max(0, Math.min(board.times.length - 1, n));
    this.seek(board.times[move]);
    this.pinned = { board, n: move };
    this.show();
  }

  /**
   * How many moves of `board` are shown at the current time.
   * @param {PreparedBoard} board
   */
  shownMoves(board) {
    const pinned = this.pinned;
    if (pinned && pinned.board === board && board.times[pinned.n] === this.t) return pinned.n;
    return movesAt(board, this.t);
  }

  /** @param {number} t */
  seek(t) {
    this.ghost = null;
    this.pinned = null;
    this.t = Math.max(START, Math.min(this.end, t));
    if (this.playingSince !== null) this.playingSince = { wall: performance.now(), t: this.t };
    this.show();
  }

  /** @param {number} speed */
  setSpeed(speed) {
    this.speed = speed;
    if (this.playingSince !== null) this.playingSince = { wall: performance.now(), t: this.t };
  }

  toggle() {
    if (this.ghost) this.closeLine();
    if (this.playingSince !== null) {
      this.pause();
      return;
    }
    if (this.t >= this.end) this.t = START;
    this.playingSince = { wall: performance.now(), t: this.t };
    this.playButton.textContent = "Pause";
    this.timer = window.setInterval(() => {
      const since = this.playingSince;
      if (!since) return;
      const elapsed = (performance.now() - since.wall) * this.speed;
      this.t = Math.min(this.end, since.t + elapsed);
      this.show();
      if (this.t >= this.end) this.pause();
    }, FRAME_MS);
  }

  pause() {
    window.clearInterval(this.timer);
    this.playingSince = null;
    this.playButton.textContent = "Play";
  }

  /** @param {Event} event */
  jump(event) {
    event.preventDefault();
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const move = control(form, "move", HTMLInputElement);
    this.seekMove(Number(this.boardSelect.value) || 0, Number(move.value) || 0);
  }

  show() {
    this.analysis.update(this.boards.map((board) => this.shownMoves(board)));
    const shown = Math.max(0, this.t);
    this.slider.value = String(Math.round(shown));
    this.clock.textContent = `${formatTime(shown, { tenths: true })} / ${formatTime(this.end, { tenths: true })}`;
    for (const [index, { board, header, view }] of this.entries.entries()) {
      const n = this.shownMoves(board);
      this.showBar(index, n);
      const ghost = this.ghost?.index === index ? this.ghost : null;
      const step = ghost ? ghost.steps[ghost.k] : null;
      view.update(step ? step.view : board.views[n]);
      if (view.ghosts.size || step) view.setGhosts(step ? step.ghosts : new Set());
      const done = n === board.views.length - 1;
      header.replaceChildren(
        h("strong", {}, `${board.rank}. ${labelled(board)}`),
        h(
          "span.row",
          {},
          done ? h(`span.badge${board.status === "won" ? ".won" : ""}`, {}, statusWord(board.status)) : null,
          h(
            "span.muted",
            { "data-testid": `replay-moves-${board.seat}` },
            `move ${n}/${board.views.length - 1}${board.tokens[n] ? ` · ${board.tokens[n]}` : ""}`,
          ),
        ),
      );
    }
  }

  // ------------------------------------------------------------ the winning line

  /**
   * Board `index`'s bar above it: "Show the winning line" where the analysis has one
   * (and the deal tells the stock's order), the line's steps while it is shown. It is
   * rebuilt only when what it offers changes, so its buttons keep focus.
   * @param {number} index
   * @param {number} n
   */
  showBar(index, n) {
    const { bar, holder, board } = this.entries[index];
    const ghost = this.ghost?.index === index ? this.ghost : null;
    holder.classList.toggle("ghost-line", Boolean(ghost));
    if (ghost) {
      const step = ghost.steps[ghost.k];
      const state = `line:${ghost.k}`;
      if (bar.dataset.state === state) return;
      const fresh = !bar.dataset.state?.startsWith("line:");
      bar.dataset.state = state;
      if (fresh) {
        bar.replaceChildren(
          h("span", { role: "status", "data-testid": `ghost-status-${board.seat}` }),
          h(
            "button.ghost",
            {
              type: "button",
              "data-testid": `ghost-previous-${board.seat}`,
              onclick: () => this.stepLine(-1),
            },
            "◀ Previous",
          ),
          h(
            "button.ghost",
            { type: "button", "data-testid": `ghost-next-${board.seat}`, onclick: () => this.stepLine(1) },
            "Next ▶",
          ),
          h(
            "button",
            { type: "button", "data-testid": `ghost-close-${board.seat}`, onclick: () => this.closeLine() },
            "Back to the game",
          ),
        );
      }
      const [status, previous, next] = /** @type {HTMLElement[]} */ ([...bar.children]);
      const cut = ghost.steps.length - 1 < ghost.length && ghost.k === ghost.steps.length - 1;
      status.textContent =
        ghost.k === 0
          ? `Winning line of ${ghost.length} moves from move ${ghost.n}: before its first move.`
          : `Winning line, move ${ghost.k} of ${ghost.length}: ${step.text}` +
            (cut ? " (the rest of the line could not be drawn)" : "");
      /** @type {HTMLButtonElement} */ (previous).disabled = ghost.k === 0;
      /** @type {HTMLButtonElement} */ (next).disabled = ghost.k === ghost.steps.length - 1;
      return;
    }
    const offered = this.lineFrom(index, n) !== null;
    const state = offered ? `offer:${n}` : "";
    if (bar.dataset.state === state) return;
    const focused = bar.contains(document.activeElement);
    bar.dataset.state = state;
    bar.replaceChildren(
      ...(offered
        ? [
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": `ghost-open-${board.seat}`,
                onclick: () => this.openLine(index),
              },
              "Show the winning line",
            ),
          ]
        : []),
    );
    if (focused && offered) /** @type {HTMLElement} */ (bar.firstElementChild).focus();
  }

  /**
   * The winning line from board `index` after `n` moves and the stock there, or null.
   * @param {number} index
   * @param {number} n
   * @returns {{line: string[], stock: Card[]} | null}
   */
  lineFrom(index, n) {
    const line = this.analysis.lineAt(index, n);
    if (!line || !this.dealStock) return null;
    const stock = stockAt(this.entries[index].board.views[n], this.dealStock);
    return stock ? { line, stock } : null;
  }

  /**
   * Show board `index`'s winning line on it, at the line's first move.
   * @param {number} index
   */
  openLine(index) {
    const board = this.boards[index];
    const n = this.shownMoves(board);
    const found = this.lineFrom(index, n);
    if (!found) return;
    this.pause();
    // Keep the replay at exactly this move while the line is shown.
    this.pinned = { board, n };
    const steps = playLine(board.views[n], found.stock, found.line, this.variant);
    this.ghost = { index, n, steps, length: found.line.length, k: Math.min(1, steps.length - 1) };
    this.show();
    /** @type {HTMLElement | null} */ (
      this.entries[index].bar.querySelector("[data-testid^=ghost-next]")
    )?.focus();
  }

  /**
   * Step the shown line by `delta` moves (to its start with -Infinity, its end with Infinity).
   * @param {number} delta
   */
  stepLine(delta) {
    const ghost = this.ghost;
    if (!ghost) return;
    const k = Math.max(0, Math.min(ghost.steps.length - 1, ghost.k + delta));
    if (k === ghost.k) return;
    ghost.k = k;
    this.show();
  }

  /** Back to the real position of the replay. */
  closeLine() {
    const ghost = this.ghost;
    if (!ghost) return;
    this.ghost = null;
    this.show();
    /** @type {HTMLElement | null} */ (this.entries[ghost.index].bar.querySelector("button"))?.focus();
  }

  /** @param {KeyboardEvent} event */
  onKey(event) {
    if (this.ghost) {
      this.onLineKey(event);
      return;
    }
    /** @type {Record<string, () => void>} */
    const actions = {
      ArrowRight: () => this.seek(nextTime(this.stops, this.t)),
      ArrowLeft: () => this.seek(previousTime(this.stops, this.t)),
      " ": () => this.toggle(),
      Home: () => this.seek(START),
      End: () => this.seek(this.end),
    };
    const action = actions[event.key];
    const target = event.target instanceof Element ? event.target : null;
    // A focused button or link keeps Space (it presses it); the arrows, Home and End
    // still step the replay. Form fields keep their keys (main.js never passes them).
    if (action && !(event.key === " " && target?.closest("button, a, input, select"))) {
      event.preventDefault();
      action();
    }
  }

  /**
   * Keys while a winning line is shown: the arrows step it, Home and End go to its
   * start and end, Escape goes back to the game.
   * @param {KeyboardEvent} event
   */
  onLineKey(event) {
    /** @type {Record<string, () => void>} */
    const actions = {
      ArrowRight: () => this.stepLine(1),
      ArrowLeft: () => this.stepLine(-1),
      Home: () => this.stepLine(-Infinity),
      End: () => this.stepLine(Infinity),
      Escape: () => this.closeLine(),
    };
    const action = actions[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  }
}
