/**
 * What every case of `pnpm test:stripe-live` shares: the test-mode keys of your own Stripe
 * account (`scripts/stripe-live.mjs` refuses to start without them) and the gateway on them.
 */
import { StripeGateway } from "../src/index.js"

/** `STRIPE_TEST_SECRET_KEY`: an `sk_test_` (or `rk_test_`) key of your own account. */
export const secretKey = process.env.STRIPE_TEST_SECRET_KEY ?? ""

/** `STRIPE_TEST_PUBLISHABLE_KEY`: the `pk_test_` key of the same account (the account check needs it). */
export const publishableKey = process.env.STRIPE_TEST_PUBLISHABLE_KEY ?? ""

/** How long a call to Stripe may take here. */
export const timeoutMs = 30_000

/**
 * `STRIPE_LIVE_API_BASE`: another Stripe host (the local fake, `test/fake/main.ts`), to try the
 * cases themselves without an account; Stripe's by default.
 */
export const apiBase = process.env.STRIPE_LIVE_API_BASE

/** How to reach Stripe: the timeout, and the host when another is set. */
export const options = { timeoutMs, ...(apiBase !== undefined ? { apiBase } : {}) }

/** The gateway on the account, as `StripeGateway.make` gives it. */
export const gateway = () => StripeGateway.make({ secretKey, ...options })
