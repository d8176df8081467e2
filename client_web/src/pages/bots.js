// @ts-check
/**
 * Bots on the pages: the label of a bot's seat or row, the lobby's "add a bot" panel
 * (the host of a race that allows bots), and the home page's "race the machine" form
 * (one click: a 2-seat race on a certified deal with a bot already seated; it starts as
 * soon as you are ready).
 */

import { h } from "../ui.js";

/** @import { BotLevel, RoomFrame } from "../wire.js" */

/** @type {[BotLevel, string][]} */
export const LEVELS = [
  ["relaxed", "Relaxed"],
  ["steady", "Steady"],
  ["expert", "Expert"],
];

/**
 * A name with its bot label: "Steady bot (bot, steady)" reads as "Steady bot · bot".
 * @param {{name: string, bot?: boolean, level?: string}} who
 */
export function labelled(who) {
  if (!who.bot) return who.name;
  return who.level ? `${who.name} (bot · ${who.level})` : `${who.name} (bot)`;
}

/**
 * The lobby's "add a bot" panel, for the host of a race that allows bots and has a
 * free seat; null otherwise.
 * @param {RoomFrame} room
 * @param {string | null} user
 * @param {(level: BotLevel) => void} onAdd
 */
export function addBotPanel(room, user, onAdd) {
  if (room.kind !== "race" || !room.bots || room.host !== user || room.state !== "lobby") return null;
  if (!room.seats.some((s) => s === null)) return null;
  const level = h(
    "select",
    { name: "level", "aria-label": "Bot level", "data-testid": "bot-level" },
    LEVELS.map(([value, text]) => h("option", { value, selected: value === "steady" }, text)),
  );
  return h(
    "div.panel",
    {},
    h("h2", {}, "Add a bot"),
    h("p.muted", {}, "A bot takes a free seat and is ready at once. It sees only its own board."),
    h(
      "div.row",
      {},
      level,
      h(
        "button",
        {
          type: "button",
          "data-testid": "add-bot",
          onclick: () =>
            onAdd(/** @type {BotLevel} */ (level instanceof HTMLSelectElement ? level.value : "steady")),
        },
        "Add a bot",
      ),
    ),
  );
}

/**
 * The home page's "race the machine" form.
 * @param {(level: BotLevel, form: HTMLFormElement) => void} onRace
 */
export function machineForm(onRace) {
  const level = h(
    "select",
    { name: "level", "aria-label": "Machine level", "data-testid": "machine-level" },
    LEVELS.map(([value, text]) => h("option", { value, selected: value === "steady" }, text)),
  );
  return h(
    "form.row",
    {
      onsubmit: (/** @type {Event} */ event) => {
        event.preventDefault();
        const form = event.target;
        if (form instanceof HTMLFormElement && level instanceof HTMLSelectElement)
          onRace(/** @type {BotLevel} */ (level.value), form);
      },
    },
    level,
    h("button", { type: "submit", "data-testid": "race-machine" }, "Race the machine"),
  );
}
