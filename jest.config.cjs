/** One Jest project: unit specs next to the code in lib/, integration specs and drills in test/. */
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/lib', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  // Sources import each other with the .js extension they have once compiled.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/setup/fail-on-unhandled-rejection.ts'],
  testTimeout: 60_000,
};
