import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "examples/*/vitest.config.ts"],
    // In CI, also write a JSON report that .ci/run summarises as "N passed, N failed".
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: ".ci/results.json" }
  }
})
