// @ts-check
/**
 * A finished game by link: every board stepping through its moves in sync, with play
 * and pause, speed, a time slider, single steps and a jump to any move. Where the solver
 * found a winning line, a board can show it step by step as ghost cards (line.js).
 * Every text is the catalog's (`replay.*`); `relabel` words the page again in place,
 * the replay going on where it is.
 */

import { BoardView } from "../board.js";
import { formatDateTime, t } from "../i18n.js";
import { dealStock, playLine, stockAt } from "../line.js";
import { START, eventTimes, movesAt, nextTime, prepareBoard, previousTime } from "../replay.js";
import { describeVariant, parseVariant } from "../rules.js";
import { AnalysisPanel } from "./replay-analysis.js";
import { labelled } from "./bots.js";
import { dailyComparison, titleBar } from "./replay-daily.js";
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
    /** @type {HTMLElement | null} */
    this.root = null;
    /** Why there is no replay to show yet: loading, the error, or none such (null). */
    /** @type {{error: unknown} | null | "loading"} */
    this.failure = "loading";
  }

  /** @param {HTMLElement} root */
  async mount(root) {
    this.root = root;
    this.relabel();
    let data;
    try {
      data = /** @type {ReplayData | null} */ (
        await getJSON(`/api/replay/${encodeURIComponent(this.roomId)}/${this.gen}`)
      );
    } catch (error) {
      this.failure = { error };
      this.relabel();
      return;
    }
    if (!data) {
      this.failure = null;
      this.relabel();
      return;
    }
    this.replayer = new Replayer(root, data, this.app);
  }

  /** The page again in the active language: the replay stays where it is. */
  relabel() {
    const root = this.root;
    if (this.replayer) {
      this.replayer.relabel();
    } else if (root) {
      const failure = this.failure;
      root.replaceChildren(
        failure === "loading"
          ? h("p.loading", {}, t("replay.loading"))
          : failure
            ? h("p.error-text", {}, t("replay.loadFailed", { reason: errorText(failure.error) }))
            : h("p", {}, t("replay.missing"), " ", h("a", { href: "#/" }, t("replay.home"))),
      );
    }
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
    /** @type {(() => void)[]} what words the page's fixed elements (run again by `relabel`) */
    this.labellers = [];
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
      "data-testid": "replay-slider",
      oninput: () => {
        this.seek(Number(this.slider.value));
      },
    });
    this.label(this.slider, "aria-label", "replay.controls.time");
    this.playButton = h("button", {
      type: "button",
      "data-testid": "replay-play",
      onclick: () => this.toggle(),
    });
    this.labellers.push(() => {
      this.playButton.textContent = t(
        this.playingSince === null ? "replay.controls.play" : "replay.controls.pause",
      );
    });
    this.clock = h("span.muted", {
      "data-testid": "replay-clock",
      style: "font-variant-numeric:tabular-nums",
    });
    const speed = h(
      "select",
      {
        onchange: () => {
          this.setSpeed(Number(speed.value));
        },
      },
      [1, 2, 4, 8, 16].map((s) => h("option", { value: String(s), selected: s === this.speed }, `${s}×`)),
    );
    this.label(speed, "aria-label", "replay.controls.speed");
    this.boardSelect = h(
      "select",
      {},
      [...this.boards.keys()].map((i) => h("option", { value: String(i) })),
    );
    this.label(this.boardSelect, "aria-label", "replay.controls.board");
    this.labellers.push(() => {
      this.boards.forEach((b, i) => {
        this.boardSelect.options[i].textContent = b.name
          ? labelled(b)
          : t("replay.controls.seat", { n: b.seat + 1 });
      });
    });
    const moveLabel = h("span");
    this.label(moveLabel, "text", "replay.controls.move");
    const go = h("button.ghost", { type: "submit" });
    this.label(go, "text", "replay.controls.go");
    const jump = h(
      "form.row",
      { onsubmit: (e) => this.jump(e) },
      h(
        "label",
        {},
        moveLabel,
        " ",
        h("input", {
          name: "move",
          type: "number",
          min: "0",
          style: "width:5rem",
          "data-testid": "replay-move",
        }),
      ),
      this.boards.length > 1 ? this.boardSelect : null,
      go,
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
      const article = h("article.watched", { "data-testid": `board-${board.seat}` }, header, bar, holder);
      grid.append(article);
      const name = t("replay.board", { name: board.name });
      const view = new BoardView(holder, { variant: this.variant, label: name });
      this.labellers.push(() => {
        const name = t("replay.board", { name: board.name });
        article.setAttribute("aria-label", name);
        holder.setAttribute("aria-label", name);
      });
      return { board, header, bar, holder, view };
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
    this.comparison = dailyComparison(data, this.boards);
    this.titleBar = this.makeTitleBar();
    root.replaceChildren(
      h(
        "section.game",
        {},
        this.titleBar,
        h(
          "div.panel.controls",
          {},
          this.label(
            h("button.ghost", { type: "button", onclick: () => this.seek(START) }, "|◀"),
            "aria-label",
            "replay.controls.start",
          ),
          this.label(
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": "replay-back",
                onclick: () => this.seek(previousTime(this.stops, this.t)),
              },
              "◀",
            ),
            "aria-label",
            "replay.controls.back",
          ),
          this.playButton,
          this.label(
            h(
              "button.ghost",
              {
                type: "button",
                "data-testid": "replay-step",
                onclick: () => this.seek(nextTime(this.stops, this.t)),
              },
              "▶",
            ),
            "aria-label",
            "replay.controls.forward",
          ),
          this.label(
            h("button.ghost", { type: "button", onclick: () => this.seek(this.end) }, "▶|"),
            "aria-label",
            "replay.controls.end",
          ),
          speed,
          this.slider,
          this.clock,
          jump,
        ),
        grid,
        this.comparison?.element,
        this.analysis.element,
      ),
    );
    for (const labeller of this.labellers) labeller();
    this.show();
    void this.analysis.load();
  }

  /**
   * Word `element` with the message `key` now and on every `relabel`: its text
   * (`what` "text") or one of its attributes.
   * @template {HTMLElement} E
   * @param {E} element
   * @param {"text" | "aria-label" | "title"} what
   * @param {string} key
   * @returns {E}
   */
  label(element, what, key) {
    const apply = () => {
      if (what === "text") element.textContent = t(key);
      else element.setAttribute(what, t(key));
    };
    apply();
    this.labellers.push(apply);
    return element;
  }

  /** The title line: the kind of game, its variant, when it ended and its seed. */
  makeTitleBar() {
    const kind = t(this.data.kind === "solo" ? "replay.kind.solo" : "replay.kind.race");
    const title = t("replay.title", { kind, variant: describeVariant(this.variant) });
    const seed = this.data.seed ?? "–";
    const subtitle = this.data.ended_at
      ? t("replay.ended", { when: formatDateTime(this.data.ended_at), seed })
      : t("replay.seed", { seed });
    const match = this.data.match;
    const link = match
      ? h(
          "a.button.ghost",
          {
            href: `#/match/${encodeURIComponent(this.data.room)}/${this.data.gen}`,
            "data-testid": "replay-match",
          },
          t("match.open", { n: this.data.gen - match.from + 1 }),
        )
      : null;
    return titleBar(title, subtitle, link);
  }

  /** Every text of the replay again in the active language; it goes on where it is. */
  relabel() {
    const bar = this.makeTitleBar();
    this.titleBar.replaceWith(bar);
    this.titleBar = bar;
    for (const labeller of this.labellers) labeller();
    this.comparison?.relabel();
    this.analysis.relabel();
    // The winning line's words, and its bar's buttons, again.
    const ghost = this.ghost;
    if (ghost) {
      const board = this.boards[ghost.index];
      const found = this.lineFrom(ghost.index, ghost.n);
      if (found) ghost.steps = playLine(board.views[ghost.n], found.stock, found.line, this.variant);
      // Its status line is worded again by `show`.
      this.entries[ghost.index].bar.dataset.state = "line:";
    }
    for (const entry of this.entries) this.labelBar(entry.bar);
    this.show();
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
    this.playButton.textContent = t("replay.controls.pause");
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
    this.playButton.textContent = t("replay.controls.play");
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
            board.tokens[n]
              ? t("replay.moveToken", { n, total: board.views.length - 1, token: board.tokens[n] })
              : t("replay.move", { n, total: board.views.length - 1 }),
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
          h("button.ghost", {
            type: "button",
            "data-testid": `ghost-previous-${board.seat}`,
            onclick: () => this.stepLine(-1),
          }),
          h("button.ghost", {
            type: "button",
            "data-testid": `ghost-next-${board.seat}`,
            onclick: () => this.stepLine(1),
          }),
          h("button", {
            type: "button",
            "data-testid": `ghost-close-${board.seat}`,
            onclick: () => this.closeLine(),
          }),
        );
        this.labelBar(bar);
      }
      const [status, previous, next] = /** @type {HTMLElement[]} */ ([...bar.children]);
      const cut = ghost.steps.length - 1 < ghost.length && ghost.k === ghost.steps.length - 1;
      status.textContent =
        ghost.k === 0
          ? t("replay.line.start", { length: ghost.length, n: ghost.n })
          : t(cut ? "replay.line.cut" : "replay.line.step", {
              k: ghost.k,
              length: ghost.length,
              move: step.text,
            });
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
            h("button.ghost", {
              type: "button",
              "data-testid": `ghost-open-${board.seat}`,
              onclick: () => this.openLine(index),
            }),
          ]
        : []),
    );
    this.labelBar(bar);
    if (focused && offered) /** @type {HTMLElement} */ (bar.firstElementChild).focus();
  }

  /**
   * Word the buttons of a board's bar: "Show the winning line", or the line's own.
   * @param {HTMLElement} bar
   */
  labelBar(bar) {
    /** @type {[string, string][]} */
    const words = [
      ["ghost-open", "replay.line.show"],
      ["ghost-previous", "replay.line.previous"],
      ["ghost-next", "replay.line.next"],
      ["ghost-close", "replay.line.close"],
    ];
    for (const [testid, key] of words) {
      const button = bar.querySelector(`[data-testid^=${testid}-]`);
      if (button) button.textContent = t(key);
    }
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
