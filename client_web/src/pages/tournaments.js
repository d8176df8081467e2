// @ts-check
/**
 * Tournaments (`#/tournaments`): the public ones (`GET /api/tournaments`) and the form
 * that creates one (`tournament_create`, docs/protocol.md section 7d). On
 * `tournament_created` the page goes to the new tournament, whose address is its invite.
 */

import { ServerError } from "../net.js";
import { describeVariant, parseVariant } from "../rules.js";
import { createRequest, localInput, utcDay } from "../tournament-data.js";
import { control, errorText, getJSON, h } from "../ui.js";

/** @import { App } from "../main.js" */
/** @import { ListedTournament } from "../wire.js" */

/** Variants offered for heats (a certified pool serves each) and for a series (the daily ones). */
const HEAT_VARIANTS = [
  ["draw=1", "Draw 1 · 1 pass"],
  ["draw=3", "Draw 3 · 3 passes"],
  ["draw=1 passes=unlimited", "Draw 1 · unlimited passes"],
  ["draw=3 passes=unlimited", "Draw 3 · unlimited passes"],
];
const DAILY_VARIANTS = [
  ["draw=1", "Draw 1 · 1 pass"],
  ["draw=3", "Draw 3 · 3 passes"],
];

/** @type {Record<string, string>} */
const STATE_WORDS = {
  upcoming: "upcoming",
  running: "under way",
  finished: "finished",
  cancelled: "cancelled",
};

/**
 * A tournament's state in words.
 * @param {string} state
 */
export function stateWord(state) {
  return STATE_WORDS[state] ?? state;
}

/**
 * A listed tournament in a line.
 * @param {ListedTournament} t
 */
function summary(t) {
  const variants = t.variants.map((v) => describeVariant(parseVariant(v))).join(" and ");
  const when =
    t.format === "series"
      ? `series ${t.from} to ${t.to}`
      : `${t.heats} heat${t.heats === 1 ? "" : "s"} from ${new Date(t.start_at ?? 0).toLocaleString()}`;
  return `${when} · ${variants} · ${t.entrants}/${t.cap} entrants · by ${t.organizer} · ${stateWord(t.state)}`;
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
 * @param {string[][]} options
 */
function select(name, options) {
  return h(
    "select",
    { name },
    options.map(([value, label]) => h("option", { value }, label)),
  );
}

export class TournamentsPage {
  /** @param {App} app */
  constructor(app) {
    this.app = app;
    this.list = h("ul.list", { "data-testid": "tournament-list" }, h("li.empty", {}, "Loading…"));
    this.error = h("p.error-text", { role: "alert", "data-testid": "create-error" });
  }

  /** @param {HTMLElement} root */
  mount(root) {
    root.append(
      h(
        "div.home.tournaments",
        {},
        h(
          "section.hero",
          {},
          h(
            "div",
            {},
            h("h1", {}, "Tournaments"),
            h(
              "p",
              {},
              "Your club's own standings: a series over the daily deals, or live heats where everyone races the same deal at once.",
            ),
          ),
        ),
        h(
          "section.panel",
          { "aria-labelledby": "create-title" },
          h("h2", { id: "create-title" }, "Create a tournament"),
          this.form(),
        ),
        h(
          "section.panel",
          { "aria-labelledby": "listed-title" },
          h("h2", { id: "listed-title" }, "Public tournaments"),
          this.list,
          h("p", {}, h("a", { href: "#/" }, "← Home")),
        ),
      ),
    );
    this.load();
  }

  unmount() {}

  async load() {
    try {
      const listed = /** @type {ListedTournament[] | null} */ (await getJSON("/api/tournaments")) ?? [];
      this.list.replaceChildren(
        ...(listed.length
          ? listed.map((t) =>
              h(
                "li",
                { "data-testid": `listed-${t.id}` },
                h("span", {}, h("strong", {}, t.name), h("br"), h("small.muted", {}, summary(t))),
                h("a.button.ghost", { href: `#/t/${t.id}` }, "Open"),
              ),
            )
          : [h("li.empty", {}, "No public tournament yet: create one.")]),
      );
    } catch (error) {
      this.list.replaceChildren(h("li.error-text", {}, `Could not load tournaments: ${errorText(error)}`));
    }
  }

  form() {
    const now = Date.now();
    const hour = 3_600_000;
    const format = h(
      "fieldset.format",
      {},
      h("legend", {}, "Format"),
      h(
        "label.check",
        {},
        h("input", { type: "radio", name: "format", value: "heats", checked: true }),
        "Live heats: everyone races the same deal at once",
      ),
      h(
        "label.check",
        {},
        h("input", { type: "radio", name: "format", value: "series" }),
        "Series over the daily deals",
      ),
    );
    const heats = h(
      "fieldset.form-grid",
      { "data-testid": "heats-fields" },
      h("legend", {}, "Heats"),
      field("Variant", select("variant", HEAT_VARIANTS)),
      field(
        "First heat starts",
        h("input", {
          type: "datetime-local",
          name: "start",
          value: localInput(now + 2 * hour),
          required: true,
        }),
      ),
      field("Number of heats", h("input", { type: "number", name: "heats", min: 1, max: 10, value: 3 })),
      field(
        "Pause between heats (seconds)",
        h("input", { type: "number", name: "pause", min: 10, max: 3600, value: 60 }),
      ),
      field(
        "Time limit per heat (minutes)",
        h("input", { type: "number", name: "limit", min: 1, max: 60, value: 10 }),
      ),
    );
    const today = utcDay(now);
    const series = h(
      "fieldset.form-grid",
      { "data-testid": "series-fields", hidden: true },
      h("legend", {}, "Series"),
      field("First day (UTC)", h("input", { type: "date", name: "from", value: today, min: today })),
      field("Last day (UTC)", h("input", { type: "date", name: "to", value: utcDay(now + 6 * 24 * hour) })),
      ...DAILY_VARIANTS.map(([value, label], i) =>
        h("label.check", {}, h("input", { type: "checkbox", name: "daily", value, checked: i === 0 }), label),
      ),
    );
    const form = h(
      "form.form-grid",
      { "data-testid": "create-tournament", onsubmit: (/** @type {Event} */ e) => this.create(e) },
      field("Name", h("input", { name: "name", maxlength: 60, required: true, autocomplete: "off" })),
      format,
      heats,
      series,
      field(
        "Registration closes",
        h("input", { type: "datetime-local", name: "closes", value: localInput(now + hour), required: true }),
      ),
      field("Entrant cap", h("input", { type: "number", name: "cap", min: 2, max: 100, value: 100 })),
      h(
        "label.check",
        {},
        h("input", { type: "checkbox", name: "listed" }),
        "List it publicly (otherwise only its link finds it)",
      ),
      this.error,
      h("button", { type: "submit", "data-testid": "create-submit" }, "Create the tournament"),
    );
    form.addEventListener("change", () => {
      const series_ = control(form, "format", RadioNodeList).value === "series";
      heats.hidden = series_;
      series.hidden = !series_;
    });
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
      this.error.textContent = made.error;
      return;
    }
    this.error.textContent = "";
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
      this.error.textContent =
        error instanceof ServerError ? error.message : `Could not create it: ${errorText(error)}`;
      if (submit instanceof HTMLButtonElement) submit.disabled = false;
    }
  }
}
