import { defineConfig } from 'vitest/config';

// Integration tests start real daemons, real children and a real browser: they get time, and run in
// forks so a crashing native module or a stray signal can never take the runner down with it.
export default defineConfig({
  test: {
    include: [
      'common/**/*.test.ts',
      'daemon/**/*.test.ts',
      'bridge-client/**/*.test.ts',
      'owner-ui/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // The run's own temp dir, removed when it ends (test/helpers/run-tmp.ts).
    globalSetup: ['test/helpers/run-tmp.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: 'test-output/vitest.json' },
  },
});
