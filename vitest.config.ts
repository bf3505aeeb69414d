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
      {
        // The hostile suite and the kernel tests again, every session under gVisor
        // (DATALYST_RUNTIME=runsc), after the docker project rather than beside it:
        // both at once would starve the timing-sensitive kernel tests of 2 cores.
        test: {
          name: 'runsc',
          include: [
            'test/hostile/hostile.docker.test.ts',
            'test/sandbox/kernel-*.docker.test.ts',
            'test/sandbox/runtime-option.docker.test.ts',
            'test/sandbox/host-channel-gvisor-proc-fd.docker.test.ts',
            'test/sandbox/control-pipe-hostile-lines.docker.test.ts',
          ],
          env: { DATALYST_RUNTIME: 'runsc' },
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
          globalSetup: ['test/support/docker-global-setup.ts', 'test/support/runsc-global-setup.ts'],
        },
      },
    ],
  },
});
