import { defineProject } from "vitest/config"

// The opt-in run against Stripe's test mode (`pnpm test:stripe-live`); never part of `pnpm test`.
const conditions = ["source", "module", "node", "development|production"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: { name: "payment-stripe-live", include: ["live/**/*.test.ts"], testTimeout: 120_000, hookTimeout: 120_000 }
})
