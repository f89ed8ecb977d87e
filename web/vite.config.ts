import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The build is committed (web/dist) and embedded in the Go binary, served
// under /app/. Output names carry content hashes, so the server can mark
// them immutable.
export default defineConfig({
  base: '/app/',
  plugins: [svelte()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0, // no data: URLs, so the CSP stays default-src 'self'
    modulePreload: { polyfill: false }, // the polyfill is an inline-free script but unneeded by evergreen browsers
    reportCompressedSize: true,
  },
  server: {
    // npm run dev: the Go server on :8080 answers the API.
    proxy: { '^/(oauth|auth|users|organisations|projects|roles|invites|milestones|packages|\\.well-known)': 'http://127.0.0.1:8080' },
  },
});
