// `npm run lint` (part of `npm test`): typescript-eslint's recommended type-checked rules over the
// sources. Each rule turned off or tuned below says why.
import tseslint from 'typescript-eslint';

export default tseslint.config({
  files: ['server/**/*.ts', 'cli/**/*.ts', 'cli/**/*.tsx', 'config/**/*.ts'],
  extends: [tseslint.configs.recommendedTypeChecked],
  languageOptions: {
    parserOptions: { project: './tsconfig.json', tsconfigRootDir: new URL('..', import.meta.url).pathname },
  },
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  rules: {
    // `void` is no excuse: it hides a rejection as well as a floating promise (reliability-notes §15).
    '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
    // Off: `async` is how an implementation of a promise-returning contract (a provider, a
    // middleware, a job handler) turns a synchronous throw into a rejection; an `await` is not owed.
    '@typescript-eslint/require-await': 'off',
    // An entity's type is declared as `interface IEmail extends InferEntity<typeof Email> {}` (style.md §4):
    // an interface, not an alias, so error messages name it.
    '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    // A leading underscore marks a binding kept on purpose: a field left out by rest destructuring, a
    // parameter a signature requires.
    '@typescript-eslint/no-unused-vars': [
      'error',
      { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
    ],
  },
});
