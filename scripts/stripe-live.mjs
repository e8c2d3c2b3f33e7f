// `pnpm test:stripe-live`: the PaymentGateway contract against Stripe's real test mode.
// Needs STRIPE_TEST_SECRET_KEY (an sk_test_ key) and access to api.stripe.com.
import { spawnSync } from "node:child_process"

const key = process.env.STRIPE_TEST_SECRET_KEY ?? ""
if (!/^(sk|rk)_test_\w+$/.test(key)) {
  console.error("test:stripe-live needs STRIPE_TEST_SECRET_KEY set to a Stripe test-mode secret key (sk_test_…).")
  console.error("It charges Stripe's test payment methods in your account's test mode; nothing is charged for real.")
  process.exit(2)
}
const run = spawnSync("vitest", ["run", "--root", "packages/payment-stripe", "--config", "vitest.live.config.ts"], {
  stdio: "inherit",
  shell: process.platform === "win32"
})
process.exit(run.status ?? 1)
