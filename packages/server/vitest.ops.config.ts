import { defineConfig } from "vitest/config"

// pnpm test:ops: the server behind Debian's nginx (scripts/ensure-nginx.mjs installs it), kept out
// of the default `pnpm test`, which must not need nginx.
const conditions = ["source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    name: "ops",
    include: ["ops/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: "../../.ci/ops-results.json" }
  }
})
