// @ts-check
/**
 * Bots on the pages: the label of a bot's seat or row, the lobby's "add a bot" panel
 * (the host of a race that allows bots), and the home page's "race the machine" form
 * (one click: a 2-seat race on a certified deal with a bot already seated; it starts as
 * soon as you are ready).
 */

import { t } from "../i18n.js";
import { h } from "../ui.js";

/** @import { BotLevel, RoomFrame } from "../wire.js" */

/** The levels offered, easiest first (each worded as `bots.level.<level>`). */
/** @type {BotLevel[]} */
export const LEVELS = ["relaxed", "steady", "expert"];

/**
 * The name each level's bot is given by the server (bots/levels.py), in English: shown
 * in the reader's language as `bots.name.<level>`.
 * @type {Record<string, string>}
 */
const BOT_NAMES = { relaxed: "Relaxed bot", steady: "Steady bot", expert: "Expert bot" };

/**
 * The level of the bot the server names `name` ("Steady bot": steady), or undefined:
 * for rows that carry a bot's name but not its level (a player's games).
 * @param {string} name
 */
export function levelNamed(name) {
  return LEVELS.find((level) => BOT_NAMES[level] === name);
}

/** A guest's default name as the server gives it (gateway/session.py): "Guest 27b4". */
const GUEST_NAME = /^Guest ([0-9a-f]{4})$/;

/**
 * A display name as this reader sees it: a name is data, one for everyone, but the
 * server's default ones (a guest's "Guest 27b4", a bot's "Steady bot") are worded in
 * the reader's language ("Gonbidatua 27b4", "Bot constante"); docs/client.md, *Languages*.
 * @param {{name: string, bot?: boolean, level?: string}} who
 */
export function shownName(who) {
  if (who.name === "" && !who.bot) return t("profile.deleted"); // a deleted account
  if (who.bot && who.level && BOT_NAMES[who.level] === who.name) return t(`bots.name.${who.level}`);
  const guest = GUEST_NAME.exec(who.name);
  return guest ? t("server.guest", { id: guest[1] }) : who.name;
}

/**
 * A name with its bot label: "Steady bot (bot · steady)".
 * @param {{name: string, bot?: boolean, level?: string}} who
 */
export function labelled(who) {
  const name = shownName(who);
  if (!who.bot) return name;
  return who.level ? t("bots.labelledLevel", { name, level: who.level }) : t("bots.labelled", { name });
}

/**
 * The levels as a `<select>`'s options, `steady` chosen.
 */
function levelOptions() {
  return LEVELS.map((value) =>
    h("option", { value, selected: value === "steady" }, t(`bots.level.${value}`)),
  );
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
    { name: "level", "aria-label": t("bots.add.level"), "data-testid": "bot-level" },
    levelOptions(),
  );
  return h(
    "div.panel",
    {},
    h("h2", {}, t("bots.add.title")),
    h("p.muted", {}, t("bots.add.help")),
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
        t("bots.add.button"),
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
    { name: "level", "aria-label": t("bots.machine.level"), "data-testid": "machine-level" },
    levelOptions(),
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
    h("button", { type: "submit", "data-testid": "race-machine" }, t("bots.machine.button")),
  );
}
