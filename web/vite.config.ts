import { defineConfig } from 'vite';

// The UI is served by `datalyst serve` at `/` under a strict CSP: no inline
// script or style, so Vite must emit everything as files (no inlined assets).
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
