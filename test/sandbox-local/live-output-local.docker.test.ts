import { afterAll } from 'vitest';

// The live-output tests, run again with the local backend: it runs the same supervisor.
const previousBackend = process.env['DATALYST_SANDBOX'];
process.env['DATALYST_SANDBOX'] = 'local';
afterAll(() => {
  if (previousBackend === undefined) delete process.env['DATALYST_SANDBOX'];
  else process.env['DATALYST_SANDBOX'] = previousBackend;
});
await import('../sandbox/live-output.docker.test.ts');
