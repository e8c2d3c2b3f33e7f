import { defineProject } from "vitest/config"

// "source" resolves workspace packages to their TypeScript sources: no build needed to test.
const conditions = ["source", "module", "node", "development|production"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: { name: "contract", include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 180_000 }
})
