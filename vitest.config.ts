import { defineConfig } from 'vitest/config';

// Two projects: fast unit tests, and tests that need a real Docker engine and
// the runner image (longer timeouts, one file at a time so that timing-sensitive
// kernel tests do not starve each other on a 2-core machine).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.docker.test.ts', 'test/**/*.browser.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'docker',
          include: ['test/**/*.docker.test.ts', 'test/**/*.browser.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          globalSetup: ['test/support/docker-global-setup.ts'],
        },
      },
    ],
  },
});
