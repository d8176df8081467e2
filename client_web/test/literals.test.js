// @ts-check
/**
 * No user-visible text written in the source of the modules converted to the message
 * catalog (docs/client.md, *Languages*). Flagged: a string or template literal with a
 * letter in it used as
 *
 * - a child of `h(spec, props, ...children)` (or inside an array or a `?:`/`||`/`+`
 *   among them), or the value of an `aria-label`, `title`, `placeholder`, `alt` or
 *   `label` property of `h`'s props;
 * - what is assigned to `textContent`, `innerText`, `title`, `placeholder` or `ariaLabel`;
 * - the argument of `setAttribute("aria-label" | "title" | "placeholder" | "alt", …)`;
 * - the text of `announce`, `showBanner`, `confirm`, `alert`, `toast`, `replaceChildren`,
 *   `append` or `prepend`.
 *
 * Every module of the client is checked (`ENFORCED`): a new one writes its text through
 * `t()` (src/i18n.js) from the start.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import * as espree from "espree";

/** Every module of the client (src/ and src/pages/): all their text is in the catalog. */
export const ENFORCED = ["src", "src/pages"].flatMap((folder) =>
  readdirSync(new URL(`../${folder}/`, import.meta.url))
    .filter((name) => name.endsWith(".js"))
    .map((name) => `${folder}/${name}`)
    .sort(),
);

/** Literals that are not words of a language (brand names, symbols): keep it short. */
const ALLOWED = new Set(["Klondike Live"]);

const LETTER = /\p{L}/u;
const TEXT_PROPS = new Set(["aria-label", "title", "placeholder", "alt", "label"]);
const TEXT_FIELDS = new Set(["textContent", "innerText", "title", "placeholder", "ariaLabel"]);
const TEXT_CALLS = new Set([
  "announce",
  "showBanner",
  "confirm",
  "alert",
  "toast",
  "replaceChildren",
  "append",
  "prepend",
]);

/**
 * @typedef {{type: string, [key: string]: any}} Node
 * @typedef {{line: number, text: string}} Finding
 */

/**
 * The literal words in an expression shown as text: the expression itself, or inside
 * the arrays, conditionals, `||`/`??` and `+` that make it (not inside calls: `t(...)`).
 * @param {Node | null | undefined} node
 * @param {Finding[]} found
 */
function words(node, found) {
  if (!node) return;
  if (node.type === "Literal" && typeof node.value === "string") {
    if (LETTER.test(node.value) && !ALLOWED.has(node.value.trim()))
      found.push({ line: node.loc.start.line, text: node.value });
  } else if (node.type === "TemplateLiteral") {
    for (const quasi of node.quasis) {
      const text = quasi.value.cooked ?? "";
      if (LETTER.test(text) && !ALLOWED.has(text.trim())) found.push({ line: quasi.loc.start.line, text });
    }
    // Nested ternaries or literals inside `${…}` are text too.
    for (const expression of node.expressions) words(expression, found);
  } else if (node.type === "ArrayExpression") {
    for (const element of node.elements) words(element, found);
  } else if (node.type === "ConditionalExpression") {
    words(node.consequent, found);
    words(node.alternate, found);
  } else if (
    node.type === "LogicalExpression" ||
    (node.type === "BinaryExpression" && node.operator === "+")
  ) {
    words(node.left, found);
    words(node.right, found);
  } else if (node.type === "SpreadElement") {
    words(node.argument, found);
  }
}

/** @param {Node} callee */
function calleeName(callee) {
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression" && !callee.computed) return callee.property.name;
  return "";
}

/**
 * Every user-visible literal of a module's source.
 * @param {string} source
 * @returns {Finding[]}
 */
export function visibleLiterals(source) {
  const tree = espree.parse(source, { ecmaVersion: 2023, sourceType: "module", loc: true });
  /** @type {Finding[]} */
  const found = [];
  /** @param {any} node */
  function visit(node) {
    if (!node || typeof node.type !== "string") return;
    if (node.type === "CallExpression") {
      const name = calleeName(node.callee);
      if (name === "h") {
        const [, props, ...children] = node.arguments;
        if (props?.type === "ObjectExpression") {
          for (const property of props.properties) {
            const key = property.key?.type === "Literal" ? property.key.value : property.key?.name;
            if (property.type === "Property" && TEXT_PROPS.has(key)) words(property.value, found);
          }
        }
        for (const child of children) words(child, found);
      } else if (TEXT_CALLS.has(name)) {
        for (const argument of node.arguments) words(argument, found);
      } else if (name === "setAttribute" && node.arguments[0]?.type === "Literal") {
        if (TEXT_PROPS.has(node.arguments[0].value)) words(node.arguments[1], found);
      }
    } else if (node.type === "AssignmentExpression" && node.left.type === "MemberExpression") {
      const field = node.left.computed ? null : node.left.property.name;
      if (TEXT_FIELDS.has(field)) words(node.right, found);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "loc" || key === "range") continue;
      if (Array.isArray(value)) value.forEach(visit);
      else if (value && typeof value === "object") visit(value);
    }
  }
  visit(tree);
  return found;
}

test("the check finds text written in the source", () => {
  const source = `
    h("p", {}, "Hello");
    h("button", { "aria-label": "Close", title: t("x") }, t("y"), cond ? "Yes" : t("n"));
    h("li", {}, \`\${n} moves\`, ["–", "ok"]);
    node.textContent = "Nothing here";
    node.setAttribute("title", \`Time: \${x}\`);
    announce("You won");
    h("span", { "data-testid": "name" }, "–", "Klondike Live", h("b", {}, "·"));
  `;
  assert.deepEqual(
    visibleLiterals(source).map((finding) => finding.text),
    ["Hello", "Close", "Yes", " moves", "ok", "Nothing here", "Time: ", "You won"],
  );
});

for (const module of ENFORCED) {
  test(`${module} shows no text of its own: it all comes from the catalog`, () => {
    const source = readFileSync(new URL(`../${module}`, import.meta.url), "utf8");
    const found = visibleLiterals(source).map(
      ({ line, text }) => `${module}:${line} ${JSON.stringify(text)}`,
    );
    assert.deepEqual(found, [], "user-visible literals: put them in locales/*.json and show them with t()");
  });
}

test("index.html marks every text it shows for translation (data-i18n)", () => {
  const page = readFileSync(new URL("../index.html", import.meta.url), "utf8");
  const body = page.slice(page.indexOf("<body>"), page.indexOf("</body>"));
  // Each element's text, outside the elements marked data-i18n (their content is the
  // catalog's) and <kbd> keys: letters there are untranslated text.
  /** @type {boolean[]} */
  const stack = [];
  const found = [];
  const VOID = new Set(["input", "br", "img", "meta", "link", "hr"]);
  for (const part of body.split(/(<[^>]+>)/)) {
    if (part.startsWith("</")) stack.pop();
    else if (part.startsWith("<")) {
      const tag = /^<([\w-]+)/.exec(part)?.[1] ?? "";
      for (const attribute of ["aria-label", "title", "placeholder", "alt"]) {
        const value = new RegExp(`\\s${attribute}="([^"]*)"`).exec(part)?.[1];
        if (value && LETTER.test(value) && !part.includes(`data-i18n-${attribute}=`)) found.push(value);
      }
      if (!VOID.has(tag) && !part.endsWith("/>"))
        stack.push(stack.at(-1) === true || part.includes(" data-i18n=") || tag === "kbd");
    } else if (!stack.at(-1) && LETTER.test(part) && !ALLOWED.has(part.trim())) found.push(part.trim());
  }
  assert.deepEqual(found, []);
});
