/**
 * Merchants and their API keys. Keys are stored as a SHA-256 lookup hash plus an AES-256-GCM
 * ciphertext (webhook signing needs the raw key); the full key is returned once, at creation.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import * as Dunning from "../payments/DunningPolicy.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchant from "./Merchant.js"
import type { PortalSettings } from "../portal/PortalSession.js"
import * as Money from "../money/Money.js"
import * as Proration from "../money/Proration.js"
import * as Secrets from "./Secrets.js"
import * as Store from "../kernel/Store.js"
import { knownMerchant } from "../kernel/ServiceSupport.js"

/**
 * What a new merchant needs.
 *
 * @since 0.1.0
 */
export interface CreateMerchant {
  readonly name: string
  /** Primary currency (ISO 4217). */
  readonly currency: string
  readonly mode?: "sandbox" | "live"
  /** A sandbox clock frozen at this instant (Unix ms); moves only through `advanceClock`. */
  readonly frozen_time?: number
  readonly proration_policy?: string
  readonly proration_credit?: Proration.CreditMode
  /** Default: the engine's {@link Dunning.DefaultPolicy}. */
  readonly dunning_final_state?: "unpaid" | "canceled"
  /** Retry days after the first failed renewal (1 to 10 increasing days of 1..60); default: the engine's policy. */
  readonly dunning_retry_days?: ReadonlyArray<number>
  /** What invoice numbers start with: 3 to 12 uppercase letters and digits (default `INV`). */
  readonly invoice_prefix?: string
}

/**
 * The billing settings a merchant may change after it is created (the billing settings write of
 * the API, the CLI's `recur settings`, the facade's `merchants.setBillingSettings`): the fields
 * given change, the others stay. `dunning_retry_days: null` returns to the engine's default policy.
 *
 * @since 0.1.0
 */
export interface BillingSettingsPatch {
  /** `per_second`, `per_day` or `fixed_days(n)` (n from 1 to 999). */
  readonly proration_policy?: string | undefined
  /** What a downgrade's unused time becomes: a `refund` or a `credit_balance`. */
  readonly proration_credit?: Proration.CreditMode | undefined
  readonly dunning_final_state?: "unpaid" | "canceled" | undefined
  readonly dunning_retry_days?: ReadonlyArray<number> | null | undefined
  /**
   * What each class of decline does: the classes given change, the others keep the policy in
   * force (the merchant's, else the engine's default); `null` returns to the engine's default.
   */
  readonly dunning_on_decline?: Dunning.DeclineRulesPatch | null | undefined
  /** How long a renewal's invoice stays an editable draft: 0 to {@link MAX_DRAFT_GRACE_SECONDS} seconds. */
  readonly invoice_draft_grace_seconds?: number | undefined
  /** Usage adjustments issued at once (`automatic`) or held for review (`review`). */
  readonly usage_adjustments?: "automatic" | "review" | undefined
}

/**
 * The longest grace period of a renewal's draft invoice: 30 days.
 *
 * @since 0.1.0
 */
export const MAX_DRAFT_GRACE_SECONDS = 30 * 86_400

/** The fields of a partial set of decline rules that are given. */
const definedOf = (rules: Dunning.DeclineRulesPatch): Partial<Dunning.DeclineRules> =>
  Object.fromEntries(Object.entries(rules).filter(([, v]) => v !== undefined))

/**
 * The first field of a billing settings patch that is out of range, as the `InvalidParameter`
 * that names it (none when every field given is in range).
 *
 * @since 0.1.0
 */
export const invalidSetting = (input: BillingSettingsPatch): Errors.InvalidParameter | undefined => {
  if (input.proration_policy !== undefined && Result.isFailure(Proration.parsePolicy(input.proration_policy)))
    return new Errors.InvalidParameter({
      param: "proration_policy",
      reason: "must be per_second, per_day or fixed_days(n)"
    })
  if (
    input.dunning_retry_days !== undefined &&
    input.dunning_retry_days !== null &&
    !Dunning.validRetryDays(input.dunning_retry_days)
  )
    return new Errors.InvalidParameter({
      param: "dunning_retry_days",
      reason: "must be 1 to 10 increasing whole days from 1 to 60"
    })
  if (
    input.invoice_draft_grace_seconds !== undefined &&
    !(
      Number.isSafeInteger(input.invoice_draft_grace_seconds) &&
      input.invoice_draft_grace_seconds >= 0 &&
      input.invoice_draft_grace_seconds <= MAX_DRAFT_GRACE_SECONDS
    )
  )
    return new Errors.InvalidParameter({
      param: "invoice_draft_grace_seconds",
      reason: `must be a whole number of seconds from 0 to ${MAX_DRAFT_GRACE_SECONDS} (30 days)`
    })
  if (
    input.usage_adjustments !== undefined &&
    input.usage_adjustments !== "automatic" &&
    input.usage_adjustments !== "review"
  )
    return new Errors.InvalidParameter({ param: "usage_adjustments", reason: "must be automatic or review" })
  if (input.dunning_on_decline !== undefined && input.dunning_on_decline !== null) {
    for (const [key, action] of Object.entries(input.dunning_on_decline)) {
      if (!(key in Dunning.standardRules))
        return new Errors.InvalidParameter({
          param: `dunning_on_decline.${key}`,
          reason: "is not a decline class (hard, soft or expired_card)"
        })
      if (action !== undefined && action !== "retry" && action !== "stop")
        return new Errors.InvalidParameter({ param: `dunning_on_decline.${key}`, reason: "must be retry or stop" })
    }
  }
  return undefined
}

/**
 * An invoice number prefix: 3 to 12 uppercase letters and digits.
 *
 * @since 0.1.0
 */
export const INVOICE_PREFIX = /^[A-Z0-9]{3,12}$/

/**
 * An API key, shown in full only here.
 *
 * @since 0.1.0
 */
export interface IssuedKey {
  readonly key_id: string
  readonly api_key: string
  readonly last4: string
}

/**
 * The default grace period of a rotated key: 3 minutes.
 *
 * @since 0.1.0
 */
export const DEFAULT_GRACE_MS = 3 * 60_000

const KEY_FORMAT = /^sk_(test|live)_[A-Za-z0-9]{20,64}$/

/**
 * Merchants and API keys.
 *
 * @since 0.1.0
 */
export class Merchants extends Context.Service<Merchants>()("@recur/core/Merchants", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const secrets = yield* Secrets.Secrets
    const merchants = storage.repository(Entities.merchant)
    const keys = storage.repository(Entities.apiKey)
    const categories = storage.repository(Entities.category)

    const now = Effect.clockWith((c) => c.currentTimeMillis)

    const issueKey = (merchant_id: string, mode: "sandbox" | "live") =>
      Effect.gen(function* () {
        const id = yield* Ids.make(Ids.prefixes.apiKey)
        const api_key = `sk_${mode === "sandbox" ? "test" : "live"}_${Secrets.randomToken(24)}`
        const record: Entities.ApiKeyRecord = {
          id,
          merchant_id,
          lookup_hash: yield* secrets.hash(api_key),
          ciphertext: yield* secrets.encrypt(api_key),
          last4: api_key.slice(-4),
          mode,
          status: Lifecycle.apiKey.initial,
          expires_at: null,
          replaced_by: null,
          created_at: yield* now
        }
        yield* Effect.orDie(keys.insert(record))
        return { key_id: id, api_key, last4: record.last4 } satisfies IssuedKey
      })

    const get = Effect.fn("Merchants.get")(function* (merchantId: string) {
      return yield* Effect.flatMap(merchants.get(merchantId, merchantId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.NotFound({ resource: "merchant", id: merchantId })),
          onSome: (v) => Effect.succeed(v.value)
        })
      )
    })

    const create = Effect.fn("Merchants.create")(function* (input: CreateMerchant) {
      if (input.name.trim() === "") return yield* new Errors.InvalidParameter({ param: "name", reason: "is required" })
      if (Result.isFailure(Money.currency(input.currency)))
        return yield* new Errors.InvalidParameter({
          param: "currency",
          reason: `unknown currency "${input.currency}"`
        })
      const mode = input.mode ?? "sandbox"
      if (input.frozen_time !== undefined && mode !== "sandbox")
        return yield* new Errors.InvalidParameter({
          param: "frozen_time",
          reason: "only sandbox merchants have a frozen clock"
        })
      const policy = input.proration_policy ?? "per_second"
      const invalid = invalidSetting({ ...input, proration_policy: policy })
      if (invalid !== undefined) return yield* invalid
      if (input.invoice_prefix !== undefined && !INVOICE_PREFIX.test(input.invoice_prefix))
        return yield* new Errors.InvalidParameter({
          param: "invoice_prefix",
          reason: "must be 3 to 12 uppercase letters and digits"
        })
      const dunning = yield* Effect.service(Dunning.DefaultPolicy)
      const id = yield* Ids.make(Ids.prefixes.merchant)
      const at = yield* now
      const merchant = new Merchant.Merchant({
        merchant_id: id,
        name: input.name.trim(),
        currency: input.currency,
        mode,
        frozen_time: input.frozen_time !== undefined ? DateTime.makeUnsafe(input.frozen_time) : null,
        proration_policy: policy,
        proration_credit: input.proration_credit ?? "refund",
        dunning_final_state: input.dunning_final_state ?? dunning.finalState,
        dunning_retry_days: input.dunning_retry_days ?? null,
        invoice_prefix: input.invoice_prefix ?? "INV",
        portal_settings: null,
        payment_processor: null,
        created_at: DateTime.makeUnsafe(at)
      })
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.orDie(merchants.insert(merchant))
          yield* Effect.orDie(
            categories.insert({
              id: yield* Ids.make(Ids.prefixes.category),
              merchant_id: id,
              name: "Default",
              description: null,
              status: "active",
              chinese_name: null,
              chinese_description: null,
              is_default: true,
              created_at: at
            })
          )
          const key = yield* issueKey(id, mode)
          return { merchant, ...key }
        })
      )
    })

    const activeKeys = (merchantId: string) =>
      Effect.map(
        Effect.orDie(
          keys.list(merchantId, {
            limit: 100,
            filters: [{ column: "status", op: "in", values: ["active", "expiring"] }]
          })
        ),
        (p) => p.list
      )

    const rotateKey = Effect.fn("Merchants.rotateKey")(function* (
      merchantId: string,
      options: { readonly graceMs?: number } = {}
    ) {
      const merchant = yield* get(merchantId)
      const grace = options.graceMs ?? DEFAULT_GRACE_MS
      if (!Number.isInteger(grace) || grace < 0)
        return yield* new Errors.InvalidParameter({ param: "grace", reason: "must be a non-negative duration" })
      const at = yield* now
      return yield* storage.withTransaction(
        Effect.gen(function* () {
          const issued = yield* issueKey(merchantId, merchant.mode)
          for (const k of yield* activeKeys(merchantId)) {
            if (k.id === issued.key_id || k.status !== "active") continue
            const current = Option.getOrThrow(yield* keys.get(merchantId, k.id))
            yield* Effect.orDie(
              keys.update(
                Lifecycle.must(
                  Merchant.moveKey(current.value, "rotate", { expires_at: at + grace, replaced_by: issued.key_id })
                ),
                current.version
              )
            )
          }
          return issued
        })
      )
    })

    const revokeKey = Effect.fn("Merchants.revokeKey")(function* (merchantId: string, keyId: string) {
      const found = yield* keys.get(merchantId, keyId)
      if (Option.isNone(found)) return yield* new Errors.NotFound({ resource: "api_key", id: keyId })
      // revoking a revoked key changes nothing
      const moved = Merchant.moveKey(found.value.value, "revoke", { expires_at: yield* now })
      if (Result.isSuccess(moved)) yield* Effect.orDie(keys.update(moved.success.value, found.value.version))
    })

    const authenticate = Effect.fn("Merchants.authenticate")(function* (apiKey: string) {
      if (!KEY_FORMAT.test(apiKey)) return yield* new Errors.Unauthorized()
      const hash = yield* secrets.hash(apiKey)
      const found = yield* keys.lookup("lookup_hash", hash)
      if (Option.isNone(found)) return yield* new Errors.Unauthorized()
      const key = found.value.value
      if (!Secrets.constantTimeEqual(key.lookup_hash, hash)) return yield* new Errors.Unauthorized()
      const at = yield* now
      if (key.status === "revoked" || (key.expires_at !== null && at >= key.expires_at))
        return yield* new Errors.Unauthorized()
      const merchant = yield* Effect.catchTag(get(key.merchant_id), "NotFound", () => new Errors.Unauthorized())
      return { merchant, key_id: key.id }
    })

    const signingKeys = Effect.fn("Merchants.signingKeys")(function* (merchantId: string) {
      const at = yield* now
      const live = (yield* activeKeys(merchantId)).filter((k) => k.expires_at === null || k.expires_at > at)
      const current = live.find((k) => k.status === "active")
      const previous = live.filter((k) => k.status === "expiring").sort((a, b) => b.created_at - a.created_at)[0]
      return {
        current: current ? Option.some(yield* secrets.decrypt(current.ciphertext)) : Option.none<string>(),
        previous: previous ? Option.some(yield* secrets.decrypt(previous.ciphertext)) : Option.none<string>()
      }
    })

    const listKeys = Effect.fn("Merchants.listKeys")(function* (merchantId: string) {
      return yield* Effect.map(activeKeys(merchantId), (ks) =>
        ks.map((k) => ({ key_id: k.id, last4: k.last4, status: k.status, expires_at: k.expires_at }))
      )
    })

    /** Writes `patch` onto the merchant's record (re-read and retried on a concurrent write). */
    const updateMerchant = (merchantId: string, patch: Partial<Omit<Merchant.Merchant, "merchant_id">>) =>
      Effect.gen(function* () {
        for (let attempt = 0; ; attempt++) {
          const current = yield* Effect.flatMap(Effect.orDie(merchants.get(merchantId, merchantId)), (o) =>
            Option.isSome(o)
              ? Effect.succeed(o.value)
              : Effect.fail(new Errors.NotFound({ resource: "merchant", id: merchantId }))
          )
          const next = new Merchant.Merchant({ ...current.value, ...patch }, { disableChecks: true })
          const saved = yield* Effect.result(merchants.update(next, current.version))
          if (saved._tag === "Success") return next
          if (saved.failure._tag !== "VersionConflict" || attempt >= 10) return yield* Effect.die(saved.failure)
        }
      })

    /**
     * Changes what the merchant's next invoice numbers start with. A new prefix starts its own
     * sequences at 1; issued invoices keep their numbers.
     */
    const setInvoicePrefix = Effect.fn("Merchants.setInvoicePrefix")(function* (merchantId: string, prefix: string) {
      if (!INVOICE_PREFIX.test(prefix))
        return yield* new Errors.InvalidParameter({
          param: "invoice_prefix",
          reason: "must be 3 to 12 uppercase letters and digits"
        })
      return yield* updateMerchant(merchantId, { invoice_prefix: prefix })
    })

    /**
     * Stores the merchant's portal settings (`null`: the server's default again). The prices are
     * checked by `Portal.setSettings`, the operation the API calls.
     */
    const setPortalSettings = Effect.fn("Merchants.setPortalSettings")(function* (
      merchantId: string,
      settings: PortalSettings | null
    ) {
      return yield* updateMerchant(merchantId, { portal_settings: settings })
    })

    /**
     * Stores the merchant's notification settings (`null`: none are sent). Checked by
     * `Notifications.setSettings`, the operation the API calls.
     */
    const setNotificationSettings = Effect.fn("Merchants.setNotificationSettings")(function* (
      merchantId: string,
      settings: Merchant.Merchant["notification_settings"]
    ) {
      return yield* updateMerchant(merchantId, { notification_settings: settings })
    })

    /**
     * Stores the merchant's payment processor (`null`: the sandbox). Checked and encrypted by
     * `PaymentSettings.set`, the operation the API calls.
     */
    const setPaymentProcessor = Effect.fn("Merchants.setPaymentProcessor")(function* (
      merchantId: string,
      processor: Merchant.PaymentProcessor | null
    ) {
      return yield* updateMerchant(merchantId, { payment_processor: processor })
    })

    /**
     * Sets what happens to off-session charges of a subscription under an open fraud dispute:
     * `hold` (the default: none is made while it is open) or `charge`.
     */
    const setDisputeSettings = Effect.fn("Merchants.setDisputeSettings")(function* (
      merchantId: string,
      settings: { readonly fraud_dispute_renewals: Merchant.Merchant["fraud_dispute_renewals"] }
    ) {
      return yield* updateMerchant(merchantId, { fraud_dispute_renewals: settings.fraud_dispute_renewals })
    })

    /**
     * Sets the subscription states that grant entitlements (`null`: the default, trial, active
     * and past_due). `Entitlements.setSettings` checks them, the operation the API calls.
     */
    const setEntitlementStatuses = Effect.fn("Merchants.setEntitlementStatuses")(function* (
      merchantId: string,
      statuses: Merchant.Merchant["entitlement_statuses"]
    ) {
      return yield* updateMerchant(merchantId, { entitlement_statuses: statuses })
    })

    /**
     * Changes the merchant's proration and dunning settings: the fields given (checked as
     * `create` checks them), the others kept. They apply from the next quote, change, renewal or
     * failed payment on; what was charged, credited or scheduled before stays as it was.
     *
     * @example
     * yield* merchants.setBillingSettings(merchantId, { proration_policy: "per_day" })
     */
    const setBillingSettings = Effect.fn("Merchants.setBillingSettings")(function* (
      merchantId: string,
      patch: BillingSettingsPatch
    ) {
      const invalid = invalidSetting(patch)
      if (invalid !== undefined) return yield* invalid
      return yield* updateMerchant(merchantId, {
        ...(patch.proration_policy !== undefined ? { proration_policy: patch.proration_policy } : {}),
        ...(patch.proration_credit !== undefined ? { proration_credit: patch.proration_credit } : {}),
        ...(patch.dunning_final_state !== undefined ? { dunning_final_state: patch.dunning_final_state } : {}),
        ...(patch.dunning_retry_days !== undefined ? { dunning_retry_days: patch.dunning_retry_days } : {}),
        ...(patch.invoice_draft_grace_seconds !== undefined
          ? { invoice_draft_grace_seconds: patch.invoice_draft_grace_seconds }
          : {}),
        ...(patch.usage_adjustments !== undefined ? { usage_adjustments: patch.usage_adjustments } : {}),
        ...(patch.dunning_on_decline !== undefined
          ? {
              dunning_on_decline:
                patch.dunning_on_decline === null
                  ? null
                  : {
                      ...Dunning.policyOf(yield* get(merchantId), yield* Effect.service(Dunning.DefaultPolicy))
                        .onDecline!,
                      ...definedOf(patch.dunning_on_decline)
                    }
            }
          : {})
      })
    })

    return {
      setBillingSettings,
      setEntitlementStatuses,
      setPaymentProcessor,
      setDisputeSettings,
      create,
      get,
      rotateKey,
      revokeKey,
      authenticate,
      signingKeys,
      listKeys,
      setInvoicePrefix,
      setPortalSettings,
      setNotificationSettings
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}

/**
 * Runs `effect` on behalf of `merchant`, the caller's merchant as just read (by `authenticate`):
 * the services take the merchant's clock (its frozen time in a sandbox) from it instead of
 * reading the merchant again. The REST adapter wraps every handler in it. Only a merchant read in
 * the same request belongs here; `Billing.advanceClock`, the one change of a merchant's clock,
 * ignores it.
 *
 * @example
 * const { merchant } = yield* merchants.authenticate(apiKey)
 * yield* Merchants.asCaller(merchant)(customers.create(merchant.merchant_id, input))
 * @since 0.1.0
 */
export const asCaller =
  (merchant: Merchant.Merchant) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, knownMerchant, merchant)
