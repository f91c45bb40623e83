import { SWC_OPTIONS } from './test/support/swc-options.mjs';

const swc = ['@swc/jest', SWC_OPTIONS];

const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: { '^@app/([a-z0-9-]+)(.*)$': '<rootDir>/libs/$1/src$2' },
  testEnvironment: 'node',
  setupFiles: ['reflect-metadata'],
};

export default {
  // A global option (ignored inside projects): e2e tests start whole relays and wait on real effects.
  testTimeout: 60000,
  // Each e2e file starts whole relays in the worker; a worker past this after a file is replaced, so what files leave behind does not add up to an out-of-memory crash.
  workerIdleMemoryLimit: '1536MB',
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/apps/**/*.spec.ts',
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/test/support/**/*.spec.ts',
        '<rootDir>/scripts/**/*.spec.ts',
        '<rootDir>/examples/**/*.spec.ts',
      ],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      ...shared,
      // The write paths of the tasks service called directly on a real Postgres database: no HTTP, no NATS.
      displayName: 'medium',
      testMatch: ['<rootDir>/test/medium/**/*.medium-spec.ts'],
      globalSetup: '<rootDir>/test/medium/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/medium/support/global-teardown.ts',
    },
  ],
};
