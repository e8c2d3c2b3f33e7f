/**
 * Which payment processor charges a merchant's customers: the sandbox (the default), or the
 * merchant's own Stripe account — its secret key and webhook signing secret stored encrypted
 * under the master key (like API keys), its publishable key for the pages. Live merchants take
 * live keys, sandbox merchants test keys. The gateway adapter reads it (`@recur/payment-stripe`'s
 * `StripeGateway.perMerchant`).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import * as Errors from "../kernel/Errors.js"
import { type Merchant, PaymentProcessor } from "../tenants/Merchant.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Ports from "../kernel/Ports.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"

export { PaymentProcessor }

/**
 * A merchant's payment settings as the API shows them: never a secret.
 *
 * @since 0.1.0
 */
export class PaymentSettingsView extends Schema.Class<PaymentSettingsView>("PaymentSettings")({
  provider: Schema.Literals(["sandbox", "stripe"]),
  publishable_key: Schema.NullOr(Schema.String),
  secret_key_last4: Schema.NullOr(Schema.String),
  webhook_secret_set: Schema.Boolean,
  /** Where the processor's webhooks go: give it to Stripe (`/webhooks/stripe/<merchant id>`). */
  webhook_url: Schema.NullOr(Schema.String)
}) {}

/**
 * What a page needs to take a payment method for a merchant: the sandbox's own card form, or
 * Stripe's Payment Element with the merchant's publishable key (and Stripe.js from `script`).
 *
 * @since 0.1.0
 */
export type PageMode =
  | { readonly provider: "sandbox" }
  | { readonly provider: "stripe"; readonly publishable_key: string; readonly script: string }

/**
 * The page mode of a merchant's processor.
 *
 * @since 0.1.0
 */
export const pageModeOf = (processor: PaymentProcessor | null, script: string): PageMode =>
  processor === null
    ? { provider: "sandbox" }
    : { provider: "stripe", publishable_key: processor.publishable_key, script }

/**
 * A merchant's payment settings as given: `provider` `sandbox`, or `stripe` with its keys
 * (a secret left out keeps the stored one).
 *
 * @since 0.1.0
 */
export interface UpdatePaymentSettings {
  readonly provider?: string | undefined
  readonly secret_key?: string | undefined
  readonly publishable_key?: string | undefined
  readonly webhook_secret?: string | undefined
}

/** A Stripe key of a mode: `sk_test_…`, `rk_live_…`, `pk_test_…`. */
const keyPattern = (prefixes: string, mode: "test" | "live") => new RegExp(`^(${prefixes})_${mode}_[A-Za-z0-9]{8,247}$`)
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]{8,200}$/

/**
 * A merchant's processor credentials, decrypted, for the gateway adapter only.
 *
 * @since 0.1.0
 */
export interface Credentials {
  readonly provider: "stripe"
  readonly publishable_key: string
  readonly secret_key: string
  readonly webhook_secret: string | null
}

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * Whether the sandbox may take a merchant's payments: only a sandbox merchant's. A live merchant's
 * customers pay real money, so its payments go to its own processor account or nowhere — never
 * to the sandbox, where a test card "pays".
 *
 * @since 0.1.0
 */
export const sandboxMayCharge = (merchant: Pick<Merchant, "mode">): boolean => merchant.mode === "sandbox"

/**
 * Why a gateway that routes each merchant to its own processor account (the sandbox for the
 * others) cannot take this merchant's payments: a live merchant without a processor account.
 * None when it can. `StripeGateway.perMerchant` routes by it; the engine asks the gateway
 * (`PaymentGateway.refusal`) before it opens a checkout session, and the server when it starts.
 *
 * @since 0.1.0
 */
export const paymentsRefusal = (
  merchant: Pick<Merchant, "merchant_id" | "mode" | "payment_processor">
): Option.Option<string> =>
  merchant.payment_processor === null && !sandboxMayCharge(merchant)
    ? Option.some(
        `merchant ${merchant.merchant_id} is live and has no payment processor: it takes no payments until its Stripe keys are set in its payment settings; the sandbox never takes a live merchant's payments`
      )
    : Option.none()

/**
 * The payment settings service.
 *
 * @since 0.1.0
 */
export class PaymentSettings extends Context.Service<PaymentSettings>()("@recur/core/PaymentSettings", {
  make: Effect.gen(function* () {
    const merchants = yield* Merchants.Merchants
    const secrets = yield* Secrets.Secrets
    const settings = yield* Settings.Settings
    const gateway = yield* Ports.PaymentGateway
    const base = settings.publicUrl.replace(/\/+$/, "")

    /**
     * Asks the processor whether the keys work, are of the merchant's mode and belong to one
     * account: a wrong key is refused (`InvalidParameter`, naming it), an unanswered question is a
     * `ProcessorUnreachable`.
     */
    const verify = (keys: Ports.AccountKeys) =>
      Effect.gen(function* () {
        if (gateway.verifyAccount === undefined)
          return yield* invalid(
            "provider",
            "this server's payment gateway takes no merchant's own Stripe account (it runs the sandbox, or one account for every merchant)"
          )
        const check = yield* gateway.verifyAccount(keys)
        if (check._tag === "Refused") return yield* invalid(check.param, check.reason)
        if (check._tag === "Unreachable")
          return yield* new Errors.ProcessorUnreachable({
            detail: `Stripe did not answer while the keys were verified (${check.message}); nothing was saved, try again`
          })
        return check.account_id
      })

    const viewOf = (merchantId: string, p: PaymentProcessor | null) =>
      new PaymentSettingsView({
        provider: p === null ? "sandbox" : p.provider,
        publishable_key: p?.publishable_key ?? null,
        secret_key_last4: p?.secret_key_last4 ?? null,
        webhook_secret_set: p?.webhook_secret_ciphertext != null,
        webhook_url: p === null ? null : `${base}/webhooks/${p.provider}/${merchantId}`
      })

    /** The merchant's payment settings, without secrets. */
    const get = (merchantId: string) =>
      Effect.map(merchants.get(merchantId), (m) => viewOf(merchantId, m.payment_processor))

    /**
     * Sets the merchant's processor: `sandbox` (sandbox merchants only), or `stripe` with a secret
     * key and a publishable key of the merchant's mode (test keys for a sandbox merchant, live keys
     * for a live one) and optionally the webhook signing secret. A secret left out keeps the
     * stored one. New keys are verified with the processor before anything is saved.
     */
    const set = Effect.fn("PaymentSettings.set")(function* (merchantId: string, input: UpdatePaymentSettings) {
      const merchant = yield* merchants.get(merchantId)
      const provider = input.provider ?? merchant.payment_processor?.provider ?? "sandbox"
      if (provider !== "sandbox" && provider !== "stripe")
        return yield* invalid("provider", "must be sandbox or stripe")
      if (provider === "sandbox") {
        if (!sandboxMayCharge(merchant))
          return yield* invalid(
            "provider",
            "a live merchant cannot take payments with the sandbox: its payments go to its own Stripe account"
          )
        yield* merchants.setPaymentProcessor(merchantId, null)
        return viewOf(merchantId, null)
      }
      const mode = merchant.mode === "live" ? "live" : "test"
      const current = merchant.payment_processor
      if (input.secret_key === undefined && current === null) return yield* invalid("secret_key", "is required")
      if (input.secret_key !== undefined && !keyPattern("sk|rk", mode).test(input.secret_key))
        return yield* invalid(
          "secret_key",
          `must be a Stripe ${mode} secret key: sk_${mode}_ or rk_${mode}_ followed by 8 to 247 letters and digits`
        )
      const publishable = input.publishable_key ?? current?.publishable_key
      if (publishable === undefined) return yield* invalid("publishable_key", "is required")
      if (!keyPattern("pk", mode).test(publishable))
        return yield* invalid(
          "publishable_key",
          `must be a Stripe ${mode} publishable key: pk_${mode}_ followed by 8 to 247 letters and digits`
        )
      if (input.webhook_secret !== undefined && !WEBHOOK_SECRET.test(input.webhook_secret))
        return yield* invalid("webhook_secret", "must be a Stripe webhook signing secret (whsec_…)")
      // new keys (or a first account) answer for themselves before they are kept
      const verified =
        input.secret_key !== undefined || current === null || publishable !== current.publishable_key
          ? yield* verify({
              merchant_id: merchantId,
              mode,
              secret_key: input.secret_key ?? (yield* secrets.decrypt(current!.secret_key_ciphertext)),
              publishable_key: publishable
            })
          : undefined
      // keys of another account than the one whose customers' cards are saved: refused (StateConflict) —
      // also after a stay on the sandbox (no keys now, the cards still in the account before)
      const from = current?.account_id ?? null
      if (verified !== undefined && (current === null || from !== verified)) {
        const refused =
          gateway.accountChange === undefined
            ? Option.none<string>()
            : yield* gateway.accountChange({ merchant_id: merchantId, from, to: verified })
        if (Option.isSome(refused))
          return yield* new Errors.StateConflict({
            resource: "merchant",
            id: merchantId,
            state: `charging saved cards on ${from === null ? "another Stripe account" : `Stripe account ${from}`}`,
            reason: `the new keys belong to Stripe account ${verified}: ${refused.value}`
          })
      }
      const processor = new PaymentProcessor({
        provider: "stripe",
        publishable_key: publishable,
        secret_key_ciphertext:
          input.secret_key !== undefined ? yield* secrets.encrypt(input.secret_key) : current!.secret_key_ciphertext,
        secret_key_last4: input.secret_key !== undefined ? input.secret_key.slice(-4) : current!.secret_key_last4,
        webhook_secret_ciphertext:
          input.webhook_secret !== undefined
            ? yield* secrets.encrypt(input.webhook_secret)
            : (current?.webhook_secret_ciphertext ?? null),
        account_id: verified ?? current?.account_id ?? null
      })
      yield* merchants.setPaymentProcessor(merchantId, processor)
      return viewOf(merchantId, processor)
    })

    return { get, set } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * Decrypts a stored processor's credentials (for the gateway adapter, which reads the merchant
 * record itself: it sits below the engine's services).
 *
 * @since 0.1.0
 */
export const credentialsOf = (processor: PaymentProcessor) =>
  Effect.gen(function* () {
    const secrets = yield* Secrets.Secrets
    return {
      provider: processor.provider,
      publishable_key: processor.publishable_key,
      secret_key: yield* secrets.decrypt(processor.secret_key_ciphertext),
      webhook_secret:
        processor.webhook_secret_ciphertext === null
          ? null
          : yield* secrets.decrypt(processor.webhook_secret_ciphertext)
    } satisfies Credentials
  })
