// The browser client's lint: ESLint's recommended rules, browser globals for the page's
// modules and Node's for the tests and this file. Types are tsc's job (tsconfig.json).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "test/fixtures/"] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: "module" },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  { files: ["src/**/*.js"], languageOptions: { globals: globals.browser } },
  { files: ["test/**/*.js", "eslint.config.js"], languageOptions: { globals: globals.node } },
];
