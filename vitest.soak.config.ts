import { defineConfig } from 'vitest/config';

// `npm run test:soak`: the full-size load run of issue 6 item 6 (200 concurrent MCP clients, several
// bursts), never part of `npm test`. Same test file as npm test's small share, bigger sizes.
export default defineConfig({
  test: {
    include: ['test/load.test.ts'],
    globalSetup: ['test/helpers/run-tmp.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
    env: {
      OGF_LOAD_CLIENTS: process.env.OGF_LOAD_CLIENTS ?? '200',
      OGF_LOAD_BURSTS: process.env.OGF_LOAD_BURSTS ?? '3',
    },
  },
});
