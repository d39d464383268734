import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ for the tests that run the CLI when it is missing or older than src/.
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores on CI, but many tests wait on child processes, timers and sockets: a third worker fills
    // those waits (the suite took 33 s with 2 workers, 28 s with 3 and 29 s with 4 on 2 cores).
    maxWorkers: 3,
    // Test files share a worker's module cache instead of importing src/ and the SDKs again each
    // (a third of the suite's CPU time). Files therefore leave no global state behind: no module
    // mocks, and process.env is restored where a test changes it.
    isolate: false,
  },
});
