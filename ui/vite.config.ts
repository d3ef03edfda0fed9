import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The app embeds `dist/`; nothing is fetched from elsewhere at run time.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  build: { target: "safari15", outDir: "dist", emptyOutDir: true },
  test: { environment: "node", include: ["src/**/*.test.ts"] },
});
