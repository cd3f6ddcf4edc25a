import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Hang guards, not measurements: a test waits for the state it needs, and a busy machine
    // (npm run test:busy) must not turn a slow pass into a failure.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
  },
});
