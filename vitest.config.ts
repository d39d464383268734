import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ for the tests that run the CLI when it is missing or older than src/.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores on CI: more workers only add contention to the process-spawning tests.
    maxWorkers: 2,
    // Test files share a worker's module cache instead of importing src/ and the SDKs again each
    // (a third of the suite's CPU time). Files therefore leave no global state behind: no module
    // mocks, and process.env is restored where a test changes it.
    isolate: false,
  },
});
