/**
 * What every case of `pnpm test:stripe-live` shares: the test-mode keys of your own Stripe
 * account (`scripts/stripe-live.mjs` refuses to start without them) and the gateway on them.
 */
import Stripe from "stripe"
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

/**
 * A Stripe SDK client on the account and on the same host as the gateway (the local fake when
 * `STRIPE_LIVE_API_BASE` names it), for a case that reads or makes Stripe's objects itself.
 */
export const client = () => {
  const base = apiBase !== undefined ? new URL(apiBase) : undefined
  return new Stripe(secretKey, {
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === "https:" ? 443 : 80),
          protocol: base.protocol.replace(":", "") as "http" | "https"
        }
      : {})
  })
}
