#!/usr/bin/env node
// From a clone (src/ beside bin/) the CLI runs from its TypeScript source
// through tsx, so there is no build step to forget; the published package
// holds no src/ and runs the compiled dist/.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
