// @ts-check
/**
 * The player's name: the "Playing as" field (the home page, a race's lobby), which
 * renames the player at once (`rename`: the seats of its rooms follow) and shows the
 * name the server confirmed, and the question asked once of a player who opens an
 * invite or tournament link without ever having chosen a name.
 */

import { t } from "../i18n.js";
import { errorText, h } from "../ui.js";

/** @import { App } from "../main.js" */

/** The longest name the server takes (docs/protocol.md section 2). */
const MAX_NAME = 24;

/**
 * A "Playing as" field: a change renames the player at once; the field then shows the
 * name as the server confirmed it (and follows renames made elsewhere on the page).
 * Returns the field and the removal of its listener.
 * @param {App} app
 * @param {string} testid
 * @returns {{node: HTMLElement, unbind: () => void}}
 */
export function nameField(app, testid) {
  const error = h("span.error-text", { role: "alert", "data-testid": `${testid}-error` });
  const input = h("input", {
    name: "name",
    maxlength: String(MAX_NAME),
    value: app.displayName(),
    placeholder: t("names.yourName"),
    "aria-label": t("names.yourName"),
    autocomplete: "nickname",
    "data-testid": testid,
    onchange: async () => {
      const value = input.value.trim();
      if (!value || value === app.displayName()) {
        input.value = app.displayName();
        return;
      }
      error.textContent = "";
      try {
        input.value = await app.setName(value);
      } catch (failure) {
        error.textContent = t("names.refused", { reason: errorText(failure) });
        input.value = app.displayName();
      }
    },
  });
  const unbind = app.onName((name) => {
    if (document.activeElement !== input) input.value = name;
  });
  return { node: h("label.row.name-field", {}, t("names.playingAs"), " ", input, error), unbind };
}

/**
 * Ask for a name once, in a modal dialog: `guess` (the guest name) is its default. OK
 * takes what is typed (the default when left empty), Escape keeps the default; either
 * way the answer is sent as a rename and stored, so nobody is asked twice. Resolves
 * once answered.
 * @param {App} app
 * @param {string} guess
 * @returns {Promise<void>}
 */
export function askName(app, guess) {
  return new Promise((resolve) => {
    const input = h("input", {
      id: "name-ask-input",
      name: "name",
      value: guess,
      maxlength: String(MAX_NAME),
      autocomplete: "nickname",
      "data-testid": "name-ask-input",
    });
    const error = h("p.error-text", { role: "alert" });
    const dialog = h(
      "dialog.name-ask",
      { "aria-labelledby": "name-ask-title", "aria-describedby": "name-ask-help", "data-testid": "name-ask" },
      h("h2", { id: "name-ask-title" }, t("names.askTitle")),
      h("p.muted", { id: "name-ask-help" }, t("names.askHelp")),
      h(
        "form.settings",
        { onsubmit: (/** @type {Event} */ event) => answer(event, input.value.trim() || guess) },
        h("label", { for: "name-ask-input" }, t("names.yourName")),
        input,
        error,
        h("div.row", {}, h("button", { type: "submit", "data-testid": "name-ask-ok" }, t("common.ok"))),
      ),
    );
    let answering = false;
    /**
     * @param {Event} event
     * @param {string} name
     */
    async function answer(event, name) {
      event.preventDefault();
      if (answering) return;
      answering = true;
      try {
        await app.setName(name);
      } catch (failure) {
        answering = false;
        error.textContent = t("names.refused", { reason: errorText(failure) });
        input.focus();
        return;
      }
      dialog.close();
      dialog.remove();
      resolve();
    }
    // Escape keeps the default (its answer too: stored, never asked again).
    dialog.addEventListener("cancel", (event) => answer(event, guess));
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    input.select();
  });
}
