import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through the validated config class (loadConfig), not process.env.',
        },
      ],
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/apps/*/src/**', '../../apps/**'], message: 'Apps never import from other apps; share through libs/.' }] },
      ],
    },
  },
  {
    files: ['**/main.ts', '**/cli-data-source.ts', 'scripts/**', 'test/**', 'jest.config.mjs', 'eslint.config.mjs'],
    rules: { 'no-restricted-syntax': 'off', 'no-restricted-imports': 'off' },
  },
);
