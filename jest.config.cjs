/** Unit specs next to the code in lib/, integration specs and drills in test/, e2e specs in sample-app/. */
module.exports = {
  rootDir: '.',
  roots: ['<rootDir>/lib', '<rootDir>/test', '<rootDir>/sample-app'],
  testMatch: ['**/*.spec.ts'],
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  // Sources import each other with the .js extension they have once compiled; the sample app imports the
  // library by its package name, as users do, which here means lib/.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^nestjs-distributed-lock$': '<rootDir>/lib/index.ts',
    '^nestjs-distributed-lock/transactional$': '<rootDir>/lib/transactions/nestjs-cls/index.ts',
    '^nestjs-distributed-lock/testing$': '<rootDir>/lib/testing/index.ts',
    '^nestjs-distributed-lock/health$': '<rootDir>/lib/health/index.ts',
    '^nestjs-distributed-lock/fencing/typeorm$': '<rootDir>/lib/fencing/typeorm/index.ts',
    '^nestjs-distributed-lock/fencing/drizzle$': '<rootDir>/lib/fencing/drizzle/index.ts',
  },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/setup/fail-on-unhandled-rejection.ts'],
  testTimeout: 60_000,
};
