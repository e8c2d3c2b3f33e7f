import { defineConfig } from "vitest/config"

const conditions = ["source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    name: "browser",
    include: ["browser/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: "../../.ci/browser-results.json" }
  }
})
