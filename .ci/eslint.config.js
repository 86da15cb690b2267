// `npm run lint` (part of `npm test`): one typed rule. A promise left floating turns a database blip
// into an unhandled rejection and a dead process (reliability-notes §15); this finds them mechanically.
import tseslint from 'typescript-eslint';

export default tseslint.config({
  files: ['server/**/*.ts', 'cli/**/*.ts', 'cli/**/*.tsx', 'config/**/*.ts'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { project: './tsconfig.json', tsconfigRootDir: new URL('..', import.meta.url).pathname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  // The sources carry directives for rules this config does not run.
  linterOptions: { reportUnusedDisableDirectives: 'off' },
  rules: {
    // `void` is no excuse: it hides a rejection as well as a floating promise.
    '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
  },
});
