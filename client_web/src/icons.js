// @ts-check
/**
 * Small icons drawn as inline SVG, so that they show on every machine: a font emoji
 * shows as a missing-glyph box where no emoji font is installed. Each icon is
 * decorative (`aria-hidden`): the text next to it says what it means.
 */

const SVG = "http://www.w3.org/2000/svg";

/** Path data per icon, on a 24x24 grid. */
const PATHS = {
  // A trophy cup with handles on a stem and base.
  trophy:
    "M7 3h10v2h3v3a4 4 0 0 1-4 4h-.3A5 5 0 0 1 13 14.9V17h3v2H8v-2h3v-2.1A5 5 0 0 1 8.3 12H8a4 4 0 0 1-4-4V5h3V3zm0 4H6v1a2 2 0 0 0 1 1.7V7zm10 0v2.7A2 2 0 0 0 18 8V7h-1zM6 20h12v2H6v-2z",
  // A circular arrow: turn the waste over into the stock.
  recycle: "M12 4a8 8 0 1 1-7.4 5h2.2A6 6 0 1 0 12 6v3L7.5 5 12 1v3z",
  // A cross: nothing left to turn.
  none: "M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6 10.6 12 5 6.4z",
};

/** @typedef {keyof typeof PATHS} IconName */

/**
 * An inline SVG icon in the current text colour, one em high.
 * @param {IconName} name
 * @returns {SVGSVGElement}
 */
export function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon icon-${name}`);
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", PATHS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}
