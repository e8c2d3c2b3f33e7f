/**
 * Schemas shared by the domain resources: RFC 3339 timestamps, metadata, tiers, discounts and
 * addresses, with the seed's field names.
 *
 * @since 0.1.0
 */
import { DateTime, Effect, Schema, SchemaIssue, SchemaTransformation } from "effect"

/**
 * An instant on the wire: RFC 3339 UTC with whole seconds (`2026-11-22T10:04:05Z`). Decodes
 * any RFC 3339 string with an offset; encodes in UTC, seconds precision.
 *
 * @since 0.1.0
 */
export const Timestamp = Schema.String.pipe(
  Schema.decodeTo(
    Schema.DateTimeUtc,
    SchemaTransformation.transformEffect({
      decode: (s) => {
        const ms = RFC3339.test(s) ? Date.parse(s) : Number.NaN
        return Number.isNaN(ms)
          ? Effect.fail(new SchemaIssue.InvalidValue({ message: "expected an RFC 3339 timestamp" }, s))
          : Effect.succeed(DateTime.makeUnsafe(ms))
      },
      encode: (dt) => Effect.succeed(formatInstant(DateTime.toEpochMillis(dt)))
    })
  )
).annotate({ identifier: "Timestamp", description: "RFC 3339 UTC timestamp, e.g. 2026-11-22T10:04:05Z" })

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Formats Unix milliseconds as the wire timestamp (seconds precision, `Z`).
 *
 * @since 0.1.0
 */
export const formatInstant = (ms: number): string =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z")

/**
 * `metadata`: string to string; key ≤ 40 bytes, value ≤ 500 bytes, whole JSON ≤ 1024 bytes.
 *
 * @since 0.1.0
 */
export const Metadata = Schema.Record(Schema.String, Schema.String).pipe(
  Schema.check(
    Schema.makeFilter((m) => {
      const enc = new TextEncoder()
      for (const [k, v] of Object.entries(m)) {
        if (enc.encode(k).length > 40) return `metadata key "${k.slice(0, 40)}…" is longer than 40 bytes`
        if (enc.encode(v).length > 500) return `metadata value of "${k}" is longer than 500 bytes`
      }
      return enc.encode(JSON.stringify(m)).length <= 1024 || "metadata is larger than 1024 bytes"
    })
  ),
  Schema.annotate({ identifier: "Metadata" })
)

/**
 * @since 0.1.0
 */
export type Metadata = typeof Metadata.Type

/**
 * A nullable string (unset fields are `null` on the wire).
 *
 * @since 0.1.0
 */
export const NullableString = Schema.NullOr(Schema.String)

/**
 * A nullable timestamp.
 *
 * @since 0.1.0
 */
export const NullableTimestamp = Schema.NullOr(Timestamp)

/**
 * `graduated` or `volume`.
 *
 * @since 0.1.0
 */
export const TierType = Schema.Literals(["graduated", "volume"])

/**
 * A quantity tier as the seed writes it (all strings; empty `quantity_max` = no bound).
 *
 * @since 0.1.0
 */
export class QuantityTier extends Schema.Class<QuantityTier>("QuantityTier")({
  quantity_min: Schema.String,
  quantity_max: Schema.String,
  unit_price: Schema.String,
  flat_amount: Schema.String
}) {}

/**
 * A usage tier as the seed writes it.
 *
 * @since 0.1.0
 */
export class UsageTier extends Schema.Class<UsageTier>("UsageTier")({
  usage_min: Schema.String,
  usage_max: Schema.String,
  unit_price: Schema.String,
  flat_amount: Schema.String
}) {}

/**
 * One applied discount.
 *
 * @since 0.1.0
 */
export class Discount extends Schema.Class<Discount>("AppliedDiscount")({
  discount_id: Schema.String,
  discount_amount: Schema.String,
  discount_code: Schema.String
}) {}

/**
 * `{ current_period: Discount[] }`.
 *
 * @since 0.1.0
 */
export class Discounts extends Schema.Class<Discounts>("Discounts")({
  current_period: Schema.Array(Discount)
}) {}

/**
 * The Trade's billing address shape (all strings).
 *
 * @since 0.1.0
 */
export class BillingAddress extends Schema.Class<BillingAddress>("BillingAddress")({
  name: Schema.optional(Schema.String),
  address_line1: Schema.optional(Schema.String),
  address_line2: Schema.optional(Schema.String),
  country_code: Schema.optional(Schema.String),
  province_code: Schema.optional(Schema.String),
  city: Schema.optional(Schema.String),
  area: Schema.optional(Schema.String),
  postal_code: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  phone_area_code: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String)
}) {}

/**
 * A feature listed on a product or price.
 *
 * @since 0.1.0
 */
export class Feature extends Schema.Class<Feature>("Feature")({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  value: Schema.optional(Schema.String)
}) {}

const RFC3339_PARTS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i

/**
 * An RFC 3339 instant in epoch ms, or undefined when malformed or not a real date (Feb 30, 25:00):
 * how request fields and query filters that name an instant are read.
 *
 * @since 0.1.0
 */
export const parseInstant = (text: string): number | undefined => {
  const m = RFC3339_PARTS.exec(text)
  if (!m) return undefined
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const probe = new Date(Date.UTC(y, mo - 1, d, h, mi, se))
  if (
    probe.getUTCFullYear() !== y ||
    probe.getUTCMonth() !== mo - 1 ||
    probe.getUTCDate() !== d ||
    probe.getUTCHours() !== h ||
    probe.getUTCMinutes() !== mi ||
    probe.getUTCSeconds() !== se
  )
    return undefined
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? undefined : ms
}
