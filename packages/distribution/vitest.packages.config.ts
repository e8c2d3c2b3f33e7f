import { defineConfig } from "vitest/config"

// Builds, packs and installs with npm: minutes, not seconds, and never beside another install.
export default defineConfig({
  test: {
    name: "packages",
    include: ["test/**/*.test.ts"],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    fileParallelism: false,
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: "../../.ci/packages-results.json" }
  }
})
