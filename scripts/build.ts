// `npm run build` (and `prepack`): compiles src/ to dist/ with tsc, file by
// file, and copies the files tsc does not emit but the build loads at run
// time, at the same relative places (see tsconfig.build.json).
import { existsSync } from 'node:fs';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { writeJsonSchemas } from './json-schemas.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const runtimeAssets = [
  // Forked by chart-pool.ts as plain JavaScript.
  'report/chart-worker-bootstrap.mjs',
  // Vendored (see src/report/README.md), imported by chart-renderer.ts.
  'report/vega-expression-interpreter.js',
  'report/vega-expression-interpreter.d.ts',
  'report/vega-expression-interpreter.LICENSE',
];

await rm(`${root}dist`, { recursive: true, force: true });
await execa('tsc', ['-p', 'tsconfig.build.json'], { cwd: root, preferLocal: true, stdio: 'inherit' });
for (const asset of runtimeAssets) await cp(`${root}src/${asset}`, `${root}dist/${asset}`);
await writeJsonSchemas();
// The web UI ships built (package.json `files`: web/dist); setup builds it, a bare clone may not have.
if (!existsSync(`${root}web/dist/index.html`)) {
  await execa('npm', ['run', 'build:web'], { cwd: root, stdio: 'inherit' });
}

// tsc rewrites `.ts` to `.js` in the JavaScript it emits but keeps the
// specifiers as written in declarations, which consumers' compilers refuse
// (TS5097) or cannot resolve; the declarations name the emitted `.js` files.
const relativeTsSpecifier = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g;
for (const file of await readdir(`${root}dist`, { recursive: true })) {
  if (!file.endsWith('.d.ts')) continue;
  const declarationPath = `${root}dist/${file}`;
  const text = await readFile(declarationPath, 'utf8');
  await writeFile(declarationPath, text.replace(relativeTsSpecifier, '$1$2.js$3'));
}
