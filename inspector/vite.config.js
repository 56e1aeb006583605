import { defineConfig } from 'vite';

// Preact through esbuild's automatic JSX runtime: no Babel, no plugin.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  base: '/',
  build: {
    outDir: '../oneiros/server/static',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2020',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
