// @ts-check
/**
 * Room codes as people type and see them: six letters of an alphabet without look-alikes
 * (no O for 0, no I or L for 1, no S for 5, no Z for 2, no B for 8). Typing is
 * case-insensitive and may group the letters with spaces or dashes; a code is shown in
 * two groups of three (`ACD-EFG`). The server reads typed text the same way
 * (`klondike_live.race.codes`, docs/protocol.md *Room codes*).
 */

export const CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY";
export const CODE_LENGTH = 6;
/** Typed text longer than this is no code (the server refuses it too). */
export const MAX_CODE_TEXT = 32;

const CODE = new RegExp(`^[${CODE_ALPHABET}]{${CODE_LENGTH}}$`);
const IGNORED = /[\s\-\u2010-\u2015\u2212]+/gu;

/**
 * The canonical code (six capitals) in typed text, or null when the text is no code.
 * @param {string} text
 * @returns {string | null}
 */
export function normaliseCode(text) {
  const typed = String(text);
  if (typed.length > MAX_CODE_TEXT) return null;
  const code = typed.replace(IGNORED, "").toUpperCase();
  return CODE.test(code) ? code : null;
}

/**
 * A code as shown to people: two groups of three letters.
 * @param {string} code
 */
export function groupedCode(code) {
  return `${code.slice(0, 3)}-${code.slice(3)}`;
}
