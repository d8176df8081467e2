// @ts-check
/**
 * The home page: your name, your unfinished games to resume and your statistics in a
 * line, *Race now* (a quick race per variant, `pages/quick.js`), a solo game, a new race, joining by room code or by link, and the lists of public races, live
 * games and finished games (refreshed every few seconds), and the language picker.
 * Every text is the catalog's (`home.*`); `relabel` draws the page again in another
 * language, keeping what the player chose in its forms.
 */

import { groupedCode, MAX_CODE_TEXT, normaliseCode } from "../codes.js";
import { formatList, t } from "../i18n.js";
import { describeVariant, parseVariant, variantText } from "../rules.js";
import { control, errorText, formatTime, getJSON, h, languagePicker, rerender } from "../ui.js";
import { labelled, machineForm } from "./bots.js";
import { nameField } from "./names.js";
import { QUICK_SEATS, QUICK_VARIANTS } from "./quick.js";
import { summaryText } from "./stats.js";

/** @import { App } from "../main.js" */
/** @import { BotLevel, CodeAnswer, CreateFrame, FinishedGame, LiveGame, OpenRoom, PlayerStats, UnfinishedGame } from "../wire.js" */

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
    this.error = h("p.error-text", { role: "alert" });
    /** Why a typed room code led nowhere, under its field. */
    this.codeError = h("p.error-text", {
      role: "alert",
      id: "join-code-error",
      "data-testid": "join-code-error",
    });
    this.lobbies = h("ul.list", { "data-testid": "public-races" });
    this.live = h("ul.list", { "data-testid": "live-games" });
    this.finished = h("ul.list", { "data-testid": "finished-games" });
    this.unfinished = h("ul.list", { "data-testid": "unfinished-games" });
    this.statsLine = h("span", { "data-testid": "stats-summary" });
    this.mine = h("section.panel", {
      hidden: true,
      "aria-labelledby": "mine-title",
      "data-testid": "your-games",
    });
    /** @type {HTMLElement | null} */
    this.root = null;
    /** @type {(() => void) | null} the name field's listener, while it is shown */
    this.unbindName = null;
    /** What the lists last showed, to draw them again in another language. */
    /** @type {unknown[] | null} */
    this.lists = null;
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    root.append(this.build());
    this.refresh();
    this.timer = window.setInterval(() => this.refresh(), REFRESH_MS);
  }

  /** The page again in the active language: the forms keep their values and focus. */
  relabel() {
    const root = this.root;
    if (!root) return;
    rerender(root, () => this.build());
    if (this.lists) this.show(this.lists);
  }

  /** The page's content in the active language. */
  build() {
    this.unbindName?.();
    const name = nameField(this.app, "name");
    this.unbindName = name.unbind;
    this.mine.replaceChildren(
      h("h2", { id: "mine-title" }, t("home.mine.title")),
      this.unfinished,
      h(
        "p.row",
        { style: "margin:0.75rem 0 0;justify-content:space-between" },
        this.statsLine,
        h(
          "span.row",
          {},
          h("a", { href: "#/me/games", "data-testid": "games-link" }, t("home.mine.games")),
          h("a", { href: "#/stats", "data-testid": "stats-link" }, t("home.mine.stats")),
          h("a", { href: "#/friends", "data-testid": "friends-link" }, t("home.mine.friends")),
        ),
      ),
    );

    const solo = h(
      "form.form-grid",
      { onsubmit: (event) => this.createSolo(event) },
      h(
        "label",
        {},
        t("home.solo.draw"),
        select(
          "draw",
          [
            ["1", t("home.solo.draw1")],
            ["3", t("home.solo.draw3")],
          ],
          "1",
        ),
      ),
      h(
        "label",
        {},
        t("home.solo.passes"),
        select(
          "passes",
          [
            ["rules", t("home.solo.passesRules")],
            ["unlimited", t("home.solo.passesUnlimited")],
          ],
          "rules",
        ),
      ),
      h(
        "label.check",
        { title: t("home.f2tHelp") },
        h("input", { type: "checkbox", name: "f2t", "data-testid": "solo-f2t" }),
        t("home.f2t"),
      ),
      h("label.check", {}, h("input", { type: "checkbox", name: "public" }), t("home.solo.public")),
      h(
        "label.check",
        { title: t("home.anyDealHelp") },
        h("input", { type: "checkbox", name: "any" }),
        t("home.anyDeal"),
      ),
      h("button", { type: "submit", "data-testid": "start-solo" }, t("home.solo.start")),
    );
    const race = h(
      "form.form-grid",
      { onsubmit: (event) => this.createRace(event) },
      h(
        "label",
        {},
        t("home.race.variant"),
        select(
          "variant",
          [
            ["draw=1 passes=1 f2t=no", t("home.race.d1p1")],
            ["draw=3 passes=3 f2t=no", t("home.race.d3p3")],
            ["draw=1 passes=unlimited f2t=no", t("home.race.d1unlimited")],
            ["draw=3 passes=unlimited f2t=no", t("home.race.d3unlimited")],
          ],
          "draw=1 passes=1 f2t=no",
        ),
      ),
      h(
        "label",
        {},
        t("home.race.racers"),
        select(
          "seats",
          [2, 3, 4, 5, 6, 7, 8].map((n) => [String(n), t("home.race.seats", { n })]),
          "2",
        ),
      ),
      h(
        "label",
        {},
        t("home.race.match"),
        select(
          "best_of",
          [
            ["1", t("home.race.single")],
            ...[3, 5, 7].map(
              (n) => /** @type {[string, string]} */ ([String(n), t("home.race.bestOf", { n })]),
            ),
          ],
          "1",
        ),
      ),
      h(
        "label",
        {},
        t("home.race.timeLimit"),
        select(
          "time",
          [
            ["0", t("home.race.noLimit")],
            ...[5, 10, 15, 30].map(
              (n) => /** @type {[string, string]} */ ([String(n * 60), t("home.race.minutes", { n })]),
            ),
          ],
          "900",
        ),
      ),
      h(
        "label.check",
        { title: t("home.f2tHelp") },
        h("input", { type: "checkbox", name: "f2t", "data-testid": "race-f2t" }),
        t("home.f2t"),
      ),
      h("label.check", {}, h("input", { type: "checkbox", name: "public" }), t("home.race.public")),
      h(
        "label.check",
        { title: t("home.anyDealHelp") },
        h("input", { type: "checkbox", name: "any" }),
        t("home.anyDeal"),
      ),
      h(
        "label.check",
        {},
        h("input", { type: "checkbox", name: "bots", checked: true }),
        t("home.race.bots"),
      ),
      h("button", { type: "submit", "data-testid": "create-race" }, t("home.race.create")),
    );
    const join = h(
      "form.row",
      { onsubmit: (event) => this.join(event) },
      h("input", {
        name: "invite",
        placeholder: t("home.join.invite"),
        "aria-label": t("home.join.invite"),
        style: "flex:1",
      }),
      h("button.ghost", { type: "submit" }, t("common.join")),
    );
    const byCode = h(
      "form.row",
      { onsubmit: (event) => this.joinByCode(event), "data-testid": "code-form" },
      h("input", {
        name: "code",
        placeholder: t("home.code.placeholder"),
        "aria-label": t("home.code.label"),
        "aria-describedby": "join-code-error",
        autocomplete: "off",
        autocapitalize: "characters",
        spellcheck: "false",
        maxlength: String(MAX_CODE_TEXT),
        "data-testid": "join-code",
        style: "flex:1",
      }),
      h("button.ghost", { type: "submit", "data-testid": "join-code-submit" }, t("common.join")),
    );
    return h(
      "div.home",
      {},
      h(
        "section.hero",
        {},
        h(
          "div",
          {},
          h("h1", {}, t("home.hero.title")),
          h(
            "p",
            {},
            t("home.hero.lead"),
            " ",
            h("a", { href: "#/daily", "data-testid": "home-daily" }, t("home.hero.daily")),
            " ",
            h("a", { href: "#/tournaments", "data-testid": "home-tournaments" }, t("home.hero.tournaments")),
          ),
        ),
        h(
          "div.hero-side",
          {},
          name.node,
          languagePicker((code) => this.app.chooseLocale(code), "home-language"),
        ),
      ),
      this.error,
      h(
        "section.panel",
        { "aria-labelledby": "quick-now-title", "data-testid": "race-now" },
        h("h2", { id: "quick-now-title" }, t("home.quick.title")),
        h("p", {}, t("home.quick.lead", { seats: QUICK_SEATS })),
        h(
          "p.row",
          {},
          Object.entries(QUICK_VARIANTS).map(([name, variant]) =>
            h(
              "a.button",
              { href: `#/quick/${name}`, "data-testid": `race-now-${name}` },
              t("home.quick.button", { variant: describeVariant(parseVariant(variant)) }),
            ),
          ),
        ),
      ),
      this.mine,
      h(
        "section.panel",
        { "aria-labelledby": "solo-title" },
        h("h2", { id: "solo-title" }, t("home.solo.title")),
        solo,
      ),
      h(
        "section.panel",
        { "aria-labelledby": "race-title" },
        h("h2", { id: "race-title" }, t("home.race.title")),
        race,
        h("h2", { style: "margin-top:1rem" }, t("home.race.machine")),
        machineForm((level, form) => this.raceMachine(level, form)),
        h("h2", { style: "margin-top:1rem" }, t("home.code.title")),
        byCode,
        this.codeError,
        h("h2", { style: "margin-top:1rem" }, t("home.join.title")),
        join,
      ),
      h(
        "section.panel",
        { "aria-labelledby": "lobby-title" },
        h("h2", { id: "lobby-title" }, t("home.lobbies.title")),
        this.lobbies,
      ),
      h(
        "section.panel",
        { "aria-labelledby": "live-title" },
        h("h2", { id: "live-title" }, t("home.live.title")),
        this.live,
      ),
      h(
        "section.panel",
        { "aria-labelledby": "done-title" },
        h("h2", { id: "done-title" }, t("home.finished.title")),
        this.finished,
      ),
    );
  }

  unmount() {
    window.clearInterval(this.timer);
    this.unbindName?.();
    this.unbindName = null;
    this.root = null;
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
      best_of: Number(control(form, "best_of", HTMLSelectElement).value),
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
      this.error.textContent = t("home.createFailed", { reason: errorText(error) });
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
    else this.error.textContent = t("home.join.bad");
  }

  /**
   * Join the race a typed room code leads to (`GET /api/codes/<code>`), or say why not.
   * @param {Event} event
   */
  async joinByCode(event) {
    event.preventDefault();
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const field = control(form, "code", HTMLInputElement);
    /** @param {string} text why the code leads nowhere ("" when it does) */
    const explain = (text) => {
      this.codeError.textContent = text;
      field.setAttribute("aria-invalid", text ? "true" : "false");
    };
    const code = normaliseCode(field.value);
    if (!code) {
      explain(t("home.code.bad"));
      return;
    }
    try {
      const found = /** @type {CodeAnswer | null} */ (await getJSON(`/api/codes/${code}`));
      if (found && typeof found.room === "string") {
        explain("");
        this.app.navigate(`#/room/${found.room}`);
      } else explain(t("home.code.unknown", { code: groupedCode(code) }));
    } catch (error) {
      explain(t("home.code.failed", { reason: errorText(error) }));
    }
  }

  async refresh() {
    // Your own lists answer to your token: a first visit has none until the server's
    // `welcome`, so they wait for it (asked without one, they would be refused).
    const signedIn = localStorage.getItem("klondike.token") ? Promise.resolve() : this.app.ready();
    /** @param {string} path */
    const mine = (path) => signedIn.then(() => getJSON(path));
    const [rooms, live, finished, unfinished, stats] = await Promise.all(
      [
        getJSON("/api/rooms"),
        getJSON("/api/live"),
        getJSON("/api/results"),
        mine("/api/me/unfinished"),
        mine("/api/me/stats"),
      ].map((answer) => answer.catch(() => null)),
    );
    if (!this.root) return; // left meanwhile
    this.lists = [rooms, live, finished, unfinished, stats];
    this.show(this.lists);
  }

  /**
   * Fill the lists with what the server answered (null: what could not be fetched).
   * @param {unknown[]} lists
   */
  show([rooms, live, finished, unfinished, stats]) {
    this.fillMine(
      /** @type {UnfinishedGame[] | null} */ (unfinished),
      /** @type {PlayerStats | null} */ (stats),
    );
    this.fill(this.lobbies, /** @type {OpenRoom[] | null} */ (rooms), t("home.lobbies.empty"), (r) => {
      const values = {
        host: r.host || t("home.lobbies.someone"),
        variant: describeVariant(parseVariant(r.variant)),
        racers: r.racers,
        capacity: r.capacity,
        bots: r.bots ?? 0,
      };
      const row = t(r.bots ? "home.lobbies.rowBots" : "home.lobbies.row", values);
      const bestOf = r.best_of ?? 1;
      return h(
        "li",
        {},
        h("span", {}, bestOf > 1 ? `${row} · ${t("home.race.bestOf", { n: bestOf })}` : row),
        h("a.button.ghost", { href: `#/room/${r.room}` }, t("common.join")),
      );
    });
    this.fill(this.live, /** @type {LiveGame[] | null} */ (live), t("home.live.empty"), (r) =>
      h(
        "li",
        {},
        h(
          "span",
          {},
          t("home.live.row", {
            kind: t(r.kind === "solo" ? "home.live.solo" : "home.live.race"),
            racers: formatList(
              (r.racers ?? []).map((name, i) => labelled({ name, bot: r.bots?.[i] })),
              { type: "unit", style: "short" },
            ),
            variant: describeVariant(parseVariant(r.variant)),
          }),
        ),
        h("a.button.ghost", { href: `#/watch/${r.room}` }, t("common.watch")),
      ),
    );
    this.fill(
      this.finished,
      /** @type {FinishedGame[] | null} */ (finished),
      t("home.finished.empty"),
      (r) => {
        const winner = r.ranking.find((row) => row.rank === 1);
        const result = !winner
          ? ""
          : winner.status === "won"
            ? t("home.finished.won", { name: labelled(winner), time: formatTime(winner.time_ms) })
            : t("home.finished.led", { name: labelled(winner), found: winner.found });
        return h(
          "li",
          {},
          h(
            "span",
            {},
            t("home.finished.row", { variant: describeVariant(parseVariant(r.variant)), result }),
          ),
          h("a.button.ghost", { href: `#/replay/${r.room}/${r.gen}` }, t("common.replay")),
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
    this.fill(this.unfinished, games, t("home.mine.empty"), (g) =>
      h(
        "li",
        {},
        h(
          "span",
          {},
          t("home.mine.row", {
            kind: g.kind === "daily" ? t("home.mine.daily", { date: g.daily ?? "" }) : t("home.mine.solo"),
            variant: describeVariant(parseVariant(g.variant)),
            moves: g.moves,
            time: formatTime(g.time_ms),
          }),
        ),
        h(
          "a.button.ghost",
          { href: `#/room/${g.room}`, "data-testid": `resume-${g.room}` },
          t("common.resume"),
        ),
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
