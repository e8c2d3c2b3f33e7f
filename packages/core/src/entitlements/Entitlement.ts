/**
 * Entitlements, the pure rules: the features a product or price grants (`seats: 10`,
 * `sso: true`), one subscription's features, merging several subscriptions' features, and
 * which subscription states grant them (a merchant's policy).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * A feature's name: lowercase letters, digits and `_`, starting with a letter, at most 64.
 *
 * @since 0.1.0
 */
export const FEATURE_KEY = /^[a-z][a-z0-9_]{0,63}$/

/**
 * At most this many features on one product or price.
 *
 * @since 0.1.0
 */
export const MAX_FEATURES = 50

/**
 * What a feature grants: on/off, or a number (a limit: seats, calls) — a safe integer.
 *
 * @since 0.1.0
 */
export type FeatureValue = boolean | number

const problem = (m: Readonly<Record<string, unknown>>): string | undefined => {
  const keys = Object.keys(m)
  if (keys.length > MAX_FEATURES) return `at most ${MAX_FEATURES} features`
  for (const k of keys) {
    if (!FEATURE_KEY.test(k)) return `feature "${k.slice(0, 64)}" must match ^[a-z][a-z0-9_]{0,63}$`
    const v = m[k]
    if (typeof v === "number" && !Number.isSafeInteger(v)) return `feature "${k}" must be a boolean or a safe integer`
  }
  return undefined
}

/**
 * Features as declared on a product or price: feature → boolean or integer (≤ 50 features,
 * names `^[a-z][a-z0-9_]{0,63}$`, integers within ±(2^53 − 1)).
 *
 * @since 0.1.0
 */
export const Features = Schema.Record(Schema.String, Schema.Union([Schema.Boolean, Schema.Number])).pipe(
  Schema.check(Schema.makeFilter((m) => problem(m) ?? true)),
  Schema.annotate({ identifier: "Features" })
)

/**
 * @since 0.1.0
 */
export type Features = typeof Features.Type

/**
 * Why `features` is not a valid feature map, or `undefined` when it is.
 *
 * @since 0.1.0
 */
export const invalidFeatures = (features: Readonly<Record<string, unknown>>): string | undefined => problem(features)

/**
 * One subscription's features: its product's, then its price's (a price's value wins over its
 * product's for the same feature).
 *
 * @since 0.1.0
 */
export const featuresOf = (product: Features, price: Features): Features => ({ ...product, ...price })

/**
 * Two grants of one feature as one: booleans OR, numbers the larger; a number beats a boolean
 * (the limit is the more precise grant). Commutative, associative and idempotent.
 *
 * @since 0.1.0
 */
export const combine = (a: FeatureValue, b: FeatureValue): FeatureValue =>
  typeof a === "number" ? (typeof b === "number" ? Math.max(a, b) : a) : typeof b === "number" ? b : a || b

/**
 * Several subscriptions' features as one set: each feature combined over every map holding it.
 * Keys come out sorted, so two equal sets print the same.
 *
 * @since 0.1.0
 */
export const merge = (maps: ReadonlyArray<Features>): Features => {
  const out = new Map<string, FeatureValue>()
  for (const m of maps)
    for (const [k, v] of Object.entries(m)) {
      const had = out.get(k)
      out.set(k, had === undefined ? v : combine(had, v))
    }
  return Object.fromEntries([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/**
 * The subscription states a merchant may let grant entitlements. `init`, `incomplete` and
 * `canceled` never do: nothing was paid, or the subscription has ended.
 *
 * @since 0.1.0
 */
export const GrantingStatus = Schema.Literals(["trial", "active", "past_due", "paused", "unpaid"])

/**
 * @since 0.1.0
 */
export type GrantingStatus = typeof GrantingStatus.Type

/**
 * The default policy: trial, active and past_due (dunning still running) grant; paused, unpaid
 * and canceled do not.
 *
 * @since 0.1.0
 */
export const DEFAULT_GRANTING: ReadonlyArray<GrantingStatus> = ["trial", "active", "past_due"]

/**
 * The states that grant for a merchant whose stored policy is `policy` (`null`: the default).
 *
 * @since 0.1.0
 */
export const grantingOf = (policy: ReadonlyArray<GrantingStatus> | null): ReadonlyArray<GrantingStatus> =>
  policy ?? DEFAULT_GRANTING

/**
 * Whether a subscription in `status` grants its features under `granting`.
 *
 * @since 0.1.0
 */
export const grants = (granting: ReadonlyArray<GrantingStatus>, status: string): boolean =>
  (granting as ReadonlyArray<string>).includes(status)

/**
 * A subscription as the rules see it: its status and its features.
 *
 * @since 0.1.0
 */
export interface Held {
  readonly subscription_id: string
  readonly status: string
  readonly features: Features
}

/**
 * A customer's entitlements: the merged features of the subscriptions that grant under the
 * policy, and which subscriptions those are (sorted).
 *
 * @since 0.1.0
 */
export const compute = (
  granting: ReadonlyArray<GrantingStatus>,
  held: ReadonlyArray<Held>
): { readonly features: Features; readonly subscription_ids: ReadonlyArray<string> } => {
  const live = held.filter((h) => grants(granting, h.status))
  return {
    features: merge(live.map((h) => h.features)),
    subscription_ids: live.map((h) => h.subscription_id).sort()
  }
}

/**
 * Whether two feature sets grant the same (key order aside).
 *
 * @since 0.1.0
 */
export const sameFeatures = (a: Features, b: Features): boolean => {
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  return ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k])
}

/**
 * Whether a feature's value lets the customer use it: `true`, or a number above 0.
 *
 * @since 0.1.0
 */
export const enabled = (value: FeatureValue | undefined): boolean =>
  value === true || (typeof value === "number" && value > 0)

/**
 * A customer's entitlements as the API returns them (and the `v2.entitlements.updated` event
 * carries).
 *
 * @since 0.1.0
 */
export class CustomerEntitlements extends Schema.Class<CustomerEntitlements>("CustomerEntitlements")({
  customer_id: Schema.String,
  features: Features,
  /** The subscriptions whose state grants under the merchant's policy. */
  subscription_ids: Schema.Array(Schema.String)
}) {}

/**
 * One feature of a customer: its value (`null` when no granting subscription has it) and
 * whether it is enabled (`true`, or a number above 0).
 *
 * @since 0.1.0
 */
export class EntitlementCheck extends Schema.Class<EntitlementCheck>("EntitlementCheck")({
  customer_id: Schema.String,
  feature: Schema.String,
  enabled: Schema.Boolean,
  value: Schema.NullOr(Schema.Union([Schema.Boolean, Schema.Number]))
}) {}

/**
 * A merchant's entitlement settings as the API shows them: the states that grant.
 *
 * @since 0.1.0
 */
export class EntitlementSettings extends Schema.Class<EntitlementSettings>("EntitlementSettings")({
  granting_statuses: Schema.Array(GrantingStatus)
}) {}
