// @ts-check
/**
 * The home page: your name, your unfinished games to resume and your statistics in a
 * line, a solo game, a new race, joining by link, and the lists of public races, live
 * games and finished games (refreshed every few seconds).
 */

import { describeVariant, parseVariant, variantText } from "../rules.js";
import { control, errorText, formatTime, getJSON, h } from "../ui.js";
import { labelled, machineForm } from "./bots.js";
import { nameField } from "./names.js";
import { summaryText } from "./stats.js";

/** @import { App } from "../main.js" */
/** @import { BotLevel, CreateFrame, FinishedGame, LiveGame, OpenRoom, PlayerStats, UnfinishedGame } from "../wire.js" */

const REFRESH_MS = 5000;

/**
 * The room id in a pasted invite link or a bare id, or null.
 * @param {string} text
 */
export function roomFromInvite(text) {
  const trimmed = String(text).trim();
  const match = /(?:#\/(?:room|watch)\/)?([A-Za-z0-9_-]{8,64})\/?$/.exec(trimmed);
  return match ? match[1] : null;
}

/**
 * @param {string} name
 * @param {[string, string][]} options value and label of each option
 * @param {string} value the one selected
 */
function select(name, options, value) {
  return h(
    "select",
    { name },
    options.map(([optionValue, label]) =>
      h("option", { value: optionValue, selected: optionValue === value }, label),
    ),
  );
}

export class HomePage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    /** @type {number | undefined} */
    this.timer = undefined;
    /** @type {(() => void)[]} */
    this.unbinders = [];
    this.error = h("p.error-text", { role: "alert" });
    this.lobbies = h("ul.list", { "data-testid": "public-races" });
    this.live = h("ul.list", { "data-testid": "live-games" });
    this.finished = h("ul.list", { "data-testid": "finished-games" });
    this.unfinished = h("ul.list", { "data-testid": "unfinished-games" });
    this.statsLine = h("span", { "data-testid": "stats-summary" });
    this.mine = h(
      "section.panel",
      { hidden: true, "aria-labelledby": "mine-title", "data-testid": "your-games" },
      h("h2", { id: "mine-title" }, "Your unfinished games"),
      this.unfinished,
      h(
        "p.row",
        { style: "margin:0.75rem 0 0;justify-content:space-between" },
        this.statsLine,
        h("a", { href: "#/stats", "data-testid": "stats-link" }, "Your statistics →"),
      ),
    );
  }

  /** @param {HTMLElement} root */
  mount(root) {
    const name = nameField(this.app, "name");
    this.unbinders.push(name.unbind);

    const solo = h(
      "form.form-grid",
      { onsubmit: (event) => this.createSolo(event) },
      h(
        "label",
        {},
        "Cards turned",
        select(
          "draw",
          [
            ["1", "Draw 1"],
            ["3", "Draw 3"],
          ],
          "1",
        ),
      ),
      h(
        "label",
        {},
        "Passes through the stock",
        select(
          "passes",
          [
            ["rules", "As the rules are written (1 or 3)"],
            ["unlimited", "Unlimited"],
          ],
          "rules",
        ),
      ),
      h(
        "label.check",
        { title: "A variant of computer versions: a card on a foundation may be moved back onto a column" },
        h("input", { type: "checkbox", name: "f2t", "data-testid": "solo-f2t" }),
        "Cards back from foundations",
      ),
      h("label.check", {}, h("input", { type: "checkbox", name: "public" }), "Let anyone watch"),
      h(
        "label.check",
        { title: "By default the deal is one the solver has proven winnable" },
        h("input", { type: "checkbox", name: "any" }),
        "Any deal, even one that cannot be won",
      ),
      h("button", { type: "submit", "data-testid": "start-solo" }, "Play solo"),
    );
    const race = h(
      "form.form-grid",
      { onsubmit: (event) => this.createRace(event) },
      h(
        "label",
        {},
        "Variant",
        select(
          "variant",
          [
            ["draw=1 passes=1 f2t=no", "Draw 1 · 1 pass"],
            ["draw=3 passes=3 f2t=no", "Draw 3 · 3 passes"],
            ["draw=1 passes=unlimited f2t=no", "Draw 1 · unlimited"],
            ["draw=3 passes=unlimited f2t=no", "Draw 3 · unlimited"],
          ],
          "draw=1 passes=1 f2t=no",
        ),
      ),
      h(
        "label",
        {},
        "Racers",
        select(
          "seats",
          [2, 3, 4, 5, 6, 7, 8].map((n) => [String(n), `${n} seats`]),
          "2",
        ),
      ),
      h(
        "label",
        {},
        "Time limit",
        select(
          "time",
          [
            ["0", "None"],
            ["300", "5 minutes"],
            ["600", "10 minutes"],
            ["900", "15 minutes"],
            ["1800", "30 minutes"],
          ],
          "900",
        ),
      ),
      h(
        "label.check",
        { title: "A variant of computer versions: a card on a foundation may be moved back onto a column" },
        h("input", { type: "checkbox", name: "f2t", "data-testid": "race-f2t" }),
        "Cards back from foundations",
      ),
      h("label.check", {}, h("input", { type: "checkbox", name: "public" }), "List it publicly"),
      h(
        "label.check",
        { title: "By default the deal is one the solver has proven winnable" },
        h("input", { type: "checkbox", name: "any" }),
        "Any deal, even one that cannot be won",
      ),
      h("label.check", {}, h("input", { type: "checkbox", name: "bots", checked: true }), "Allow bots"),
      h("button", { type: "submit", "data-testid": "create-race" }, "Create race"),
    );
    const join = h(
      "form.row",
      { onsubmit: (event) => this.join(event) },
      h("input", {
        name: "invite",
        placeholder: "Invite link or room id",
        "aria-label": "Invite link or room id",
        style: "flex:1",
      }),
      h("button.ghost", { type: "submit" }, "Join"),
    );
    root.append(
      h(
        "div.home",
        {},
        h(
          "section.hero",
          {},
          h(
            "div",
            {},
            h("h1", {}, "Race your friends on the same deal"),
            h(
              "p",
              {},
              "Same cards, same clock, live. Or play on your own and let others watch. ",
              h("a", { href: "#/daily", "data-testid": "home-daily" }, "Today's daily challenge →"),
              " ",
              h("a", { href: "#/tournaments", "data-testid": "home-tournaments" }, "Tournaments →"),
            ),
          ),
          name.node,
        ),
        this.error,
        this.mine,
        h(
          "section.panel",
          { "aria-labelledby": "solo-title" },
          h("h2", { id: "solo-title" }, "Solo game"),
          solo,
        ),
        h(
          "section.panel",
          { "aria-labelledby": "race-title" },
          h("h2", { id: "race-title" }, "New race"),
          race,
          h("h2", { style: "margin-top:1rem" }, "Race the machine"),
          machineForm((level, form) => this.raceMachine(level, form)),
          h("h2", { style: "margin-top:1rem" }, "Join by link"),
          join,
        ),
        h(
          "section.panel",
          { "aria-labelledby": "lobby-title" },
          h("h2", { id: "lobby-title" }, "Open races"),
          this.lobbies,
        ),
        h(
          "section.panel",
          { "aria-labelledby": "live-title" },
          h("h2", { id: "live-title" }, "Watch live"),
          this.live,
        ),
        h(
          "section.panel",
          { "aria-labelledby": "done-title" },
          h("h2", { id: "done-title" }, "Finished games"),
          this.finished,
        ),
      ),
    );
    this.refresh();
    this.timer = window.setInterval(() => this.refresh(), REFRESH_MS);
  }

  unmount() {
    window.clearInterval(this.timer);
    for (const unbind of this.unbinders.splice(0)) unbind();
  }

  /** @param {Event} event */
  async createSolo(event) {
    event.preventDefault();
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const draw = Number(control(form, "draw", HTMLSelectElement).value);
    const passes =
      control(form, "passes", HTMLSelectElement).value === "unlimited" ? null : draw === 3 ? 3 : 1;
    await this.create(form, {
      kind: "solo",
      variant: variantText({ draw, passes, f2t: control(form, "f2t", HTMLInputElement).checked }),
      time_limit: 0,
      public: control(form, "public", HTMLInputElement).checked,
      deal: control(form, "any", HTMLInputElement).checked ? "any" : "certified",
    });
  }

  /** @param {Event} event */
  async createRace(event) {
    event.preventDefault();
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    await this.create(form, {
      kind: "race",
      variant: variantText({
        ...parseVariant(control(form, "variant", HTMLSelectElement).value),
        f2t: control(form, "f2t", HTMLInputElement).checked,
      }),
      seats: Number(control(form, "seats", HTMLSelectElement).value),
      time_limit: Number(control(form, "time", HTMLSelectElement).value),
      public: control(form, "public", HTMLInputElement).checked,
      deal: control(form, "any", HTMLInputElement).checked ? "any" : "certified",
      bots: control(form, "bots", HTMLInputElement).checked,
    });
  }

  /**
   * A race against one bot on a certified draw-1 deal; it starts once you are ready.
   * @param {BotLevel} level
   * @param {HTMLFormElement} form
   */
  async raceMachine(level, form) {
    await this.create(form, {
      kind: "race",
      variant: "draw=1 passes=1 f2t=no",
      seats: 2,
      time_limit: 900,
      deal: "certified",
      bots: true,
      machine: level,
    });
  }

  /**
   * @param {HTMLFormElement} form
   * @param {Omit<CreateFrame, "t">} request
   */
  async create(form, request) {
    const button = form.querySelector('button[type="submit"]');
    const submit = button instanceof HTMLButtonElement ? button : null;
    if (submit) submit.disabled = true;
    this.error.textContent = "";
    try {
      const conn = await this.app.session();
      if (request.kind === "solo") {
        // One round trip: `created`, then the room and its board (protocol section 5).
        const reply = await conn.request({ t: "create", ...request, join: true });
        this.app.openJoined(reply.room);
      } else {
        const reply = await conn.request({ t: "create", ...request });
        this.app.created.add(reply.room);
        this.app.navigate(`#/room/${reply.room}`);
      }
    } catch (error) {
      this.error.textContent = `Could not create the game: ${errorText(error)}`;
      if (submit) submit.disabled = false;
    }
  }

  /** @param {Event} event */
  join(event) {
    event.preventDefault();
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const room = roomFromInvite(control(form, "invite", HTMLInputElement).value);
    if (room) this.app.navigate(`#/room/${room}`);
    else this.error.textContent = "That is not an invite link or a room id.";
  }

  async refresh() {
    const [rooms, live, finished, unfinished, stats] = await Promise.all(
      ["/api/rooms", "/api/live", "/api/results", "/api/me/unfinished", "/api/me/stats"].map((path) =>
        getJSON(path).catch(() => null),
      ),
    );
    this.fillMine(
      /** @type {UnfinishedGame[] | null} */ (unfinished),
      /** @type {PlayerStats | null} */ (stats),
    );
    this.fill(this.lobbies, /** @type {OpenRoom[] | null} */ (rooms), "No open races. Create one!", (r) =>
      h(
        "li",
        {},
        h(
          "span",
          {},
          `${r.host || "Someone"} · ${describeVariant(parseVariant(r.variant))} · ${r.racers}/${r.capacity}${r.bots ? ` (${r.bots} bot${r.bots === 1 ? "" : "s"})` : ""}`,
        ),
        h("a.button.ghost", { href: `#/room/${r.room}` }, "Join"),
      ),
    );
    this.fill(this.live, /** @type {LiveGame[] | null} */ (live), "Nothing to watch right now.", (r) =>
      h(
        "li",
        {},
        h(
          "span",
          {},
          `${r.kind === "solo" ? "Solo" : "Race"} · ${(r.racers ?? []).map((name, i) => labelled({ name, bot: r.bots?.[i] })).join(", ")} · ${describeVariant(parseVariant(r.variant))}`,
        ),
        h("a.button.ghost", { href: `#/watch/${r.room}` }, "Watch"),
      ),
    );
    this.fill(
      this.finished,
      /** @type {FinishedGame[] | null} */ (finished),
      "No finished games yet.",
      (r) => {
        const winner = r.ranking.find((row) => row.rank === 1);
        const text = winner
          ? `${labelled(winner)} ${winner.status === "won" ? `won in ${formatTime(winner.time_ms)}` : `led with ${winner.found} card${winner.found === 1 ? "" : "s"}`}`
          : "";
        return h(
          "li",
          {},
          h("span", {}, `${describeVariant(parseVariant(r.variant))} · ${text}`),
          h("a.button.ghost", { href: `#/replay/${r.room}/${r.gen}` }, "Replay"),
        );
      },
    );
  }

  /**
   * Your unfinished games (newest first, each with a resume link) and your statistics
   * in a line; the panel shows once there is either (a first visit has neither).
   * @param {UnfinishedGame[] | null} games
   * @param {PlayerStats | null} stats
   */
  fillMine(games, stats) {
    if (games === null && stats === null) return;
    const played = stats?.totals.played ?? 0;
    this.mine.hidden = !(games?.length || played);
    if (stats) this.statsLine.textContent = summaryText(stats.totals);
    this.fill(this.unfinished, games, "Nothing to resume: every game you started is finished.", (g) =>
      h(
        "li",
        {},
        h(
          "span",
          {},
          `${g.kind === "daily" ? `Daily ${g.daily ?? ""} (unranked)` : "Solo"} · ${describeVariant(parseVariant(g.variant))} · ${g.moves} move${g.moves === 1 ? "" : "s"} · ${formatTime(g.time_ms)}`,
        ),
        h("a.button.ghost", { href: `#/room/${g.room}`, "data-testid": `resume-${g.room}` }, "Resume"),
      ),
    );
  }

  /**
   * Fill a list with a row per item (at most 12), or a line saying it is empty; a list
   * that could not be fetched (null) keeps what it shows.
   * @template T
   * @param {HTMLElement} list
   * @param {T[] | null} items
   * @param {string} emptyText
   * @param {(item: T) => HTMLElement} row
   */
  fill(list, items, emptyText, row) {
    if (items === null) return;
    list.replaceChildren(...(items.length ? items.slice(0, 12).map(row) : [h("li.empty", {}, emptyText)]));
  }
}
