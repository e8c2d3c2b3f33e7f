import { defineConfig } from "vitest/config"

// "source" resolves workspace packages to their TypeScript sources: no build needed.
const conditions = ["source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    name: "reliability",
    include: ["reliability/**/*.test.ts"],
    testTimeout: 3_600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: "../../.ci/reliability-results.json" }
  }
})
