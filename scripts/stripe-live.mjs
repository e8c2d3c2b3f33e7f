// `pnpm test:stripe-live`: Recur's Stripe adapter against Stripe's real test mode (the
// PaymentGateway contract, the check of a merchant's keys, …: packages/payment-stripe/live/).
// Needs STRIPE_TEST_SECRET_KEY (an sk_test_ key), STRIPE_TEST_PUBLISHABLE_KEY (the pk_test_ key of
// the same account) and access to api.stripe.com. STRIPE_LIVE_API_BASE points the cases at another
// host instead (the local fake: node --import tsx packages/payment-stripe/test/fake/main.ts
// '[{"secret_key":"sk_test_x1","publishable_key":"pk_test_x1"}]' prints its base), to try them.
import { spawnSync } from "node:child_process"

const key = process.env.STRIPE_TEST_SECRET_KEY ?? ""
const publishable = process.env.STRIPE_TEST_PUBLISHABLE_KEY ?? ""
const wrong = [
  ...(/^(sk|rk)_test_\w+$/.test(key)
    ? []
    : ["STRIPE_TEST_SECRET_KEY set to a Stripe test-mode secret key (sk_test_… or rk_test_…)"]),
  ...(/^pk_test_\w+$/.test(publishable)
    ? []
    : ["STRIPE_TEST_PUBLISHABLE_KEY set to the test-mode publishable key of the same account (pk_test_…)"])
]
if (wrong.length > 0) {
  for (const w of wrong) console.error(`test:stripe-live needs ${w}.`)
  console.error("It charges Stripe's test payment methods in your account's test mode; nothing is charged for real.")
  process.exit(2)
}
const run = spawnSync("vitest", ["run", "--root", "packages/payment-stripe", "--config", "vitest.live.config.ts"], {
  stdio: "inherit",
  shell: process.platform === "win32"
})
process.exit(run.status ?? 1)
