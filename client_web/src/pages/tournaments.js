// @ts-check
/**
 * Tournaments (`#/tournaments`): the public ones (`GET /api/tournaments`) and the form
 * that creates one (`tournament_create`, docs/protocol.md section 7d). On
 * `tournament_created` the page goes to the new tournament, whose address is its invite.
 */

import { formatDateTime, formatList, t } from "../i18n.js";
import { ServerError } from "../net.js";
import { describeVariant, parseVariant } from "../rules.js";
import { createRequest, localInput, utcDay } from "../tournament-data.js";
import { control, errorText, getJSON, h, rerender } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { ListedTournament } from "../wire.js" */

/** Variants offered for heats (a certified pool serves each) and for a series (the daily ones). */
const HEAT_VARIANTS = ["draw=1", "draw=3", "draw=1 passes=unlimited", "draw=3 passes=unlimited"];
const DAILY_VARIANTS = ["draw=1", "draw=3"];

/**
 * A variant (its notation) in words.
 * @param {string} notation
 */
const variantText = (notation) => describeVariant(parseVariant(notation));

/**
 * Variants in words, as a list ("Draw 1 · 1 pass and Draw 3 · 3 passes").
 * @param {readonly string[]} variants
 */
export function variantsText(variants) {
  return formatList(variants.map(variantText));
}

/**
 * A tournament's state in words.
 * @param {string} state
 */
export function stateWord(state) {
  return ["upcoming", "running", "finished", "cancelled"].includes(state)
    ? t(`tournament.state.${state}`)
    : state;
}

/**
 * A listed tournament in a line.
 * @param {ListedTournament} l
 */
function summary(l) {
  const common = {
    variants: variantsText(l.variants),
    entrants: l.entrants,
    cap: l.cap,
    organizer: l.organizer,
    state: stateWord(l.state),
  };
  return l.format === "series"
    ? t("tournament.list.summarySeries", { ...common, from: l.from ?? "", to: l.to ?? "" })
    : t("tournament.list.summaryHeats", {
        ...common,
        heats: l.heats ?? 0,
        start: formatDateTime(l.start_at ?? 0),
      });
}

/**
 * A labelled control.
 * @param {string} text
 * @param {HTMLElement} input
 */
function field(text, input) {
  return h("label", {}, text, input);
}

/**
 * @param {string} name
 * @param {string[]} variants
 */
function select(name, variants) {
  return h(
    "select",
    { name },
    variants.map((value) => h("option", { value }, variantText(value))),
  );
}

export class TournamentsPage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    this.list = h("ul.list", { "data-testid": "tournament-list" });
    this.error = h("p.error-text", { role: "alert", "data-testid": "create-error" });
    /** @type {HTMLElement | null} */
    this.root = null;
    /** @type {ListedTournament[] | null} the list as last loaded (null: loading) */
    this.listed = null;
    /** @type {unknown} why the list could not be loaded */
    this.loadError = null;
    /** @type {{key: string} | {refused: unknown} | {failed: unknown} | null} what the create form last said */
    this.problem = null;
  }

  /** @param {HTMLElement} root */
  mount(root) {
    this.root = root;
    root.append(this.build());
    this.showList();
    this.load();
  }

  unmount() {}

  /** The page again in the active language: the form keeps its values and focus. */
  relabel() {
    const root = this.root;
    if (!root) return;
    rerender(root, () => this.build());
    const form = root.querySelector("form");
    if (form instanceof HTMLFormElement) this.showFormat(form);
    this.showList();
    this.showProblem();
  }

  /** The page's content in the active language. */
  build() {
    return h(
      "div.home.tournaments",
      {},
      h(
        "section.hero",
        {},
        h("div", {}, h("h1", {}, t("tournament.list.title")), h("p", {}, t("tournament.list.lead"))),
      ),
      h(
        "section.panel",
        { "aria-labelledby": "create-title" },
        h("h2", { id: "create-title" }, t("tournament.form.title")),
        this.form(),
      ),
      h(
        "section.panel",
        { "aria-labelledby": "listed-title" },
        h("h2", { id: "listed-title" }, t("tournament.list.public")),
        this.list,
        h("p", {}, h("a", { href: "#/" }, t("tournament.list.home"))),
      ),
    );
  }

  async load() {
    try {
      this.listed = /** @type {ListedTournament[] | null} */ (await getJSON("/api/tournaments")) ?? [];
      this.loadError = null;
    } catch (error) {
      this.loadError = error;
    }
    this.showList();
  }

  /** The public tournaments, as last loaded. */
  showList() {
    if (this.loadError !== null) {
      this.list.replaceChildren(
        h("li.error-text", {}, t("tournament.list.loadFailed", { reason: errorText(this.loadError) })),
      );
      return;
    }
    const listed = this.listed;
    this.list.replaceChildren(
      ...(listed === null
        ? [h("li.empty", {}, t("tournament.list.loading"))]
        : listed.length
          ? listed.map((l) =>
              h(
                "li",
                { "data-testid": `listed-${l.id}` },
                h("span", {}, h("strong", {}, l.name), h("br"), h("small.muted", {}, summary(l))),
                h("a.button.ghost", { href: `#/t/${l.id}` }, t("tournament.list.open")),
              ),
            )
          : [h("li.empty", {}, t("tournament.list.empty"))]),
    );
  }

  /** What the create form last said, in the active language. */
  showProblem() {
    const problem = this.problem;
    this.error.textContent = !problem
      ? ""
      : "key" in problem
        ? t(problem.key)
        : "refused" in problem
          ? errorText(problem.refused)
          : t("tournament.form.error.failed", { reason: errorText(problem.failed) });
  }

  /**
   * Show the fields of the format chosen.
   * @param {HTMLFormElement} form
   */
  showFormat(form) {
    const series = control(form, "format", RadioNodeList).value === "series";
    const heats = form.querySelector("[data-testid=heats-fields]");
    const days = form.querySelector("[data-testid=series-fields]");
    if (heats instanceof HTMLElement) heats.hidden = series;
    if (days instanceof HTMLElement) days.hidden = !series;
  }

  form() {
    const now = Date.now();
    const hour = 3_600_000;
    const format = h(
      "fieldset.format",
      {},
      h("legend", {}, t("tournament.form.format")),
      h(
        "label.check",
        {},
        h("input", { type: "radio", name: "format", value: "heats", checked: true }),
        t("tournament.form.formatHeats"),
      ),
      h(
        "label.check",
        {},
        h("input", { type: "radio", name: "format", value: "series" }),
        t("tournament.form.formatSeries"),
      ),
    );
    const heats = h(
      "fieldset.form-grid",
      { "data-testid": "heats-fields" },
      h("legend", {}, t("tournament.form.heats")),
      field(t("tournament.form.variant"), select("variant", HEAT_VARIANTS)),
      field(
        t("tournament.form.start"),
        h("input", {
          type: "datetime-local",
          name: "start",
          value: localInput(now + 2 * hour),
          required: true,
        }),
      ),
      field(
        t("tournament.form.heatCount"),
        h("input", { type: "number", name: "heats", min: 1, max: 10, value: 3 }),
      ),
      field(
        t("tournament.form.pause"),
        h("input", { type: "number", name: "pause", min: 10, max: 3600, value: 60 }),
      ),
      field(
        t("tournament.form.timeLimit"),
        h("input", { type: "number", name: "limit", min: 1, max: 60, value: 10 }),
      ),
    );
    const today = utcDay(now);
    const series = h(
      "fieldset.form-grid",
      { "data-testid": "series-fields", hidden: true },
      h("legend", {}, t("tournament.form.series")),
      field(t("tournament.form.from"), h("input", { type: "date", name: "from", value: today, min: today })),
      field(
        t("tournament.form.to"),
        h("input", { type: "date", name: "to", value: utcDay(now + 6 * 24 * hour) }),
      ),
      ...DAILY_VARIANTS.map((value, i) =>
        h(
          "label.check",
          {},
          h("input", { type: "checkbox", name: "daily", value, checked: i === 0 }),
          variantText(value),
        ),
      ),
    );
    const form = h(
      "form.form-grid",
      { "data-testid": "create-tournament", onsubmit: (/** @type {Event} */ e) => this.create(e) },
      field(
        t("tournament.form.name"),
        h("input", { name: "name", maxlength: 60, required: true, autocomplete: "off" }),
      ),
      format,
      heats,
      series,
      field(
        t("tournament.form.closes"),
        h("input", { type: "datetime-local", name: "closes", value: localInput(now + hour), required: true }),
      ),
      field(
        t("tournament.form.cap"),
        h("input", { type: "number", name: "cap", min: 2, max: 100, value: 100 }),
      ),
      h("label.check", {}, h("input", { type: "checkbox", name: "listed" }), t("tournament.form.listed")),
      this.error,
      h("button", { type: "submit", "data-testid": "create-submit" }, t("tournament.form.submit")),
    );
    if (form instanceof HTMLFormElement) form.addEventListener("change", () => this.showFormat(form));
    return form;
  }

  /** @param {Event} event */
  async create(event) {
    event.preventDefault();
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const value = (/** @type {string} */ name) => control(form, name, HTMLInputElement).value;
    const number = (/** @type {string} */ name) => Number(value(name));
    const daily = [...form.querySelectorAll("input[name=daily]")].flatMap((node) =>
      node instanceof HTMLInputElement && node.checked ? [node.value] : [],
    );
    const made = createRequest({
      name: value("name"),
      format: control(form, "format", RadioNodeList).value === "series" ? "series" : "heats",
      listed: control(form, "listed", HTMLInputElement).checked,
      cap: number("cap"),
      closes: value("closes"),
      from: value("from"),
      to: value("to"),
      dailyVariants: daily,
      variant: control(form, "variant", HTMLSelectElement).value,
      start: value("start"),
      heats: number("heats"),
      pause: number("pause"),
      timeLimit: number("limit") * 60,
    });
    if ("error" in made) {
      this.problem = { key: made.error };
      this.showProblem();
      return;
    }
    this.problem = null;
    this.showProblem();
    const submit = form.querySelector("button[type=submit]");
    if (submit instanceof HTMLButtonElement) submit.disabled = true;
    try {
      const conn = await this.app.ready();
      const reply = await conn.request(made.request);
      // The tournament's page says it was just made, and shows its link to share.
      window.sessionStorage.setItem("klondike.created", reply.tournament);
      this.app.created.add(reply.tournament);
      this.app.navigate(`#/t/${encodeURIComponent(reply.tournament)}`);
    } catch (error) {
      this.problem = error instanceof ServerError ? { refused: error } : { failed: error };
      this.showProblem();
      if (submit instanceof HTMLButtonElement) submit.disabled = false;
    }
  }
}
