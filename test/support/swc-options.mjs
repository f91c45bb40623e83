// How the tests compile TypeScript with swc: ES modules, legacy decorators with metadata (as Nest
// and class-validator need), class names kept. Used by Jest and by child processes of the tests.
export const SWC_OPTIONS = {
  sourceMaps: 'inline',
  module: { type: 'es6' },
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    keepClassNames: true,
  },
};
