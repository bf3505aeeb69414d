import { afterAll } from 'vitest';

// The Docker backend's kernel-cells tests, run again with the local backend (a plain
// Python process): the same kernel must behave the same way.
const previousBackend = process.env['DATALYST_SANDBOX'];
process.env['DATALYST_SANDBOX'] = 'local';
afterAll(() => {
  if (previousBackend === undefined) delete process.env['DATALYST_SANDBOX'];
  else process.env['DATALYST_SANDBOX'] = previousBackend;
});
await import('../sandbox/kernel-cells.docker.test.ts');
