// @ts-check
/**
 * A finished game by link: every board stepping through its moves in sync, with play
 * and pause, speed, a time slider, single steps and a jump to any move.
 */

import { BoardView } from "../board.js";
import { eventTimes, movesAt, nextTime, prepareBoard, previousTime } from "../replay.js";
import { describeVariant, parseVariant } from "../rules.js";
import { AnalysisPanel } from "./replay-analysis.js";
import { dailyComparison } from "./replay-daily.js";
import { control, errorText, formatTime, getJSON, h, statusWord } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { PreparedBoard } from "../replay.js" */
/** @import { ReplayData } from "../wire.js" */

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
    this.t = 0;
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
      this.boards.map((b, i) => h("option", { value: String(i) }, b.name || `Seat ${b.seat + 1}`)),
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
    /** @type {{board: PreparedBoard, header: HTMLElement, view: BoardView}[]} */
    this.entries = this.boards.map((board) => {
      const holder = h("div");
      const header = h("header");
      grid.append(
        h(
          "article.watched",
          { "aria-label": `${board.name}'s board`, "data-testid": `board-${board.seat}` },
          header,
          holder,
        ),
      );
      return {
        board,
        header,
        view: new BoardView(holder, { variant: this.variant, label: `${board.name}'s board` }),
      };
    });
    /** A board shown after exactly `n` moves (moves made in the same instant share a time). */
    /** @type {{board: PreparedBoard, n: number} | null} */
    this.pinned = null;
    this.analysis = new AnalysisPanel(app, data, this.boards, (index, n) => this.seekMove(index, n));
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
            { type: "button", "aria-label": "To the start", onclick: () => this.seek(0) },
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
    this.pinned = null;
    this.t = Math.max(0, Math.min(this.end, t));
    if (this.playingSince !== null) this.playingSince = { wall: performance.now(), t: this.t };
    this.show();
  }

  /** @param {number} speed */
  setSpeed(speed) {
    this.speed = speed;
    if (this.playingSince !== null) this.playingSince = { wall: performance.now(), t: this.t };
  }

  toggle() {
    if (this.playingSince !== null) {
      this.pause();
      return;
    }
    if (this.t >= this.end) this.t = 0;
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
    this.slider.value = String(Math.round(this.t));
    this.clock.textContent = `${formatTime(this.t, { tenths: true })} / ${formatTime(this.end, { tenths: true })}`;
    for (const { board, header, view } of this.entries) {
      const n = this.shownMoves(board);
      view.update(board.views[n]);
      const done = n === board.views.length - 1;
      header.replaceChildren(
        h("strong", {}, `${board.rank}. ${board.name}`),
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

  /** @param {KeyboardEvent} event */
  onKey(event) {
    /** @type {Record<string, () => void>} */
    const actions = {
      ArrowRight: () => this.seek(nextTime(this.stops, this.t)),
      ArrowLeft: () => this.seek(previousTime(this.stops, this.t)),
      " ": () => this.toggle(),
      Home: () => this.seek(0),
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
}
