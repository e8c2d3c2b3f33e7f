/**
 * Branded, prefixed, time-sortable ids: TypeID format (`sub_01jd…`, prefix + base32 UUIDv7),
 * so logs and webhooks explain themselves and ids sort by creation time.
 *
 * Ids are made from the time of Effect's `Clock` and random bytes, so a `TestClock` scenario
 * produces ids in scenario order.
 *
 * @since 0.1.0
 */
import { type Brand, Clock, Effect, Schema } from "effect"
import { fromString, fromUUIDBytes, toUUIDBytes } from "typeid-js"

/**
 * The prefix of every entity's id.
 *
 * @since 0.1.0
 */
export const prefixes = {
  merchant: "mch",
  apiKey: "key",
  customer: "cus",
  category: "cat",
  product: "prd",
  price: "pri",
  priceVersion: "prv",
  pricePlan: "pln",
  checkoutSession: "ses",
  subscription: "sub",
  subscriptionItem: "si",
  trade: "trd",
  invoice: "inv",
  refund: "ref",
  usageRecord: "usg",
  webhookEndpoint: "we",
  webhookEvent: "evt",
  webhookDelivery: "whd",
  quote: "quo",
  discount: "dsc",
  discountRedemption: "rdm",
  taxRate: "txr",
  portalSession: "bps",
  subscriptionSchedule: "sch",
  priceMigration: "pmg",
  priceMigrationLine: "pml",
  notification: "ntf",
  invoiceItem: "ii",
  balanceTransaction: "cbtxn",
  billableMetric: "bm",
  creditGrant: "cgr",
  meterEvent: "mev",
  usageAdjustment: "uadj",
  usageAlert: "ua"
} as const

/**
 * @since 0.1.0
 */
export type Entity = keyof typeof prefixes

/**
 * @since 0.1.0
 */
export type Prefix = (typeof prefixes)[Entity]

/**
 * Makes UUIDv7 bytes: 48-bit Unix milliseconds, version 7, variant 10, and random bits.
 * Pure: pass the time and 10 random bytes.
 *
 * @since 0.1.0
 */
export const uuidV7Bytes = (millis: number, random: Uint8Array): Uint8Array => {
  if (random.length < 10) throw new RangeError("uuidV7Bytes needs 10 random bytes")
  const bytes = new Uint8Array(16)
  // 48 bits of milliseconds: exact in a double, so plain division is exact too
  let ms = Math.max(0, Math.trunc(millis)) % 2 ** 48
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256
    ms = Math.floor(ms / 256)
  }
  for (let i = 0; i < 10; i++) bytes[6 + i] = random[i] ?? 0
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f)
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
  return bytes
}

/**
 * Encodes a TypeID from a prefix, a time and random bytes (pure).
 *
 * @example
 * Ids.encode("sub", 1732270000000, new Uint8Array(10)) // "sub_01jd…"
 * @since 0.1.0
 */
export const encode = <P extends string>(prefix: P, millis: number, random: Uint8Array): `${P}_${string}` =>
  fromUUIDBytes(prefix, uuidV7Bytes(millis, random)).toString() as `${P}_${string}`

/**
 * Whether `id` is a well-formed TypeID with this prefix.
 *
 * @since 0.1.0
 */
export const isValid = (prefix: string, id: string): boolean => {
  try {
    fromString(id, prefix)
    return true
  } catch {
    return false
  }
}

/**
 * The creation time (Unix milliseconds) carried by an id.
 *
 * @since 0.1.0
 */
export const timestampOf = (id: string): number => {
  const bytes = toUUIDBytes(fromString(id))
  let ms = 0
  for (let i = 0; i < 6; i++) ms = ms * 256 + (bytes[i] ?? 0)
  return ms
}

// Random bytes come from Web Crypto 4 KiB at a time: one call per ~400 ids instead of one per id
// (a call costs more than the bytes; the billing worker makes several ids per renewal).
const pool = new Uint8Array(4096)
let poolAt = pool.length
const randomBytes = (n: number): Uint8Array => {
  if (poolAt + n > pool.length) {
    globalThis.crypto.getRandomValues(pool)
    poolAt = 0
  }
  const bytes = pool.slice(poolAt, poolAt + n)
  poolAt += n
  return bytes
}

// Monotonic within a millisecond (UUIDv7's 12-bit rand_a used as a counter), so ids made one
// after another in the same process sort in the order they were made.
let lastMillis = -1
let counter = 0

/**
 * A fresh id for an entity, timed by Effect's `Clock` (Web Crypto random bits). Ids made by
 * one process sort in creation order, also within one millisecond.
 *
 * @since 0.1.0
 */
export const make = <P extends string>(prefix: P): Effect.Effect<`${P}_${string}`> =>
  Effect.map(Clock.currentTimeMillis, (ms) => {
    const random = randomBytes(10)
    if (ms === lastMillis && counter < 0xfff) {
      counter++
    } else {
      lastMillis = ms
      counter = ((random[0]! << 8) | random[1]!) & 0x7ff
    }
    random[0] = (counter >> 8) & 0x0f
    random[1] = counter & 0xff
    return encode(prefix, ms, random)
  })

const idSchema = <const P extends string, const B extends string>(prefix: P, brand: B) =>
  Schema.String.pipe(
    Schema.check(
      Schema.makeFilter((s: string) => s.startsWith(`${prefix}_`) || `expected an id starting with "${prefix}_"`)
    ),
    Schema.brand<B>(brand as never),
    Schema.annotate({ identifier: brand, description: `${brand} (\`${prefix}_…\`)` })
  )

/** @since 0.1.0 */
export const MerchantId = idSchema("mch", "MerchantId")
/** @since 0.1.0 */
export type MerchantId = typeof MerchantId.Type
/** @since 0.1.0 */
export const CustomerId = idSchema("cus", "CustomerId")
/** @since 0.1.0 */
export type CustomerId = typeof CustomerId.Type
/** @since 0.1.0 */
export const CategoryId = idSchema("cat", "CategoryId")
/** @since 0.1.0 */
export type CategoryId = typeof CategoryId.Type
/** @since 0.1.0 */
export const ProductId = idSchema("prd", "ProductId")
/** @since 0.1.0 */
export type ProductId = typeof ProductId.Type
/** @since 0.1.0 */
export const PriceId = idSchema("pri", "PriceId")
/** @since 0.1.0 */
export type PriceId = typeof PriceId.Type
/** @since 0.1.0 */
export const PriceVersionId = idSchema("prv", "PriceVersionId")
/** @since 0.1.0 */
export type PriceVersionId = typeof PriceVersionId.Type
/** @since 0.1.0 */
export const CheckoutSessionId = idSchema("ses", "CheckoutSessionId")
/** @since 0.1.0 */
export type CheckoutSessionId = typeof CheckoutSessionId.Type
/** @since 0.1.0 */
export const SubscriptionId = idSchema("sub", "SubscriptionId")
/** @since 0.1.0 */
export type SubscriptionId = typeof SubscriptionId.Type
/** @since 0.1.0 */
export const TradeId = idSchema("trd", "TradeId")
/** @since 0.1.0 */
export type TradeId = typeof TradeId.Type
/** @since 0.1.0 */
export const InvoiceId = idSchema("inv", "InvoiceId")
/** @since 0.1.0 */
export type InvoiceId = typeof InvoiceId.Type
/** @since 0.1.0 */
export const RefundId = idSchema("ref", "RefundId")
/** @since 0.1.0 */
export type RefundId = typeof RefundId.Type
/** @since 0.1.0 */
export const UsageRecordId = idSchema("usg", "UsageRecordId")
/** @since 0.1.0 */
export type UsageRecordId = typeof UsageRecordId.Type
/** @since 0.1.0 */
export const WebhookEndpointId = idSchema("we", "WebhookEndpointId")
/** @since 0.1.0 */
export type WebhookEndpointId = typeof WebhookEndpointId.Type
/** @since 0.1.0 */
export const WebhookEventId = idSchema("evt", "WebhookEventId")
/** @since 0.1.0 */
export type WebhookEventId = typeof WebhookEventId.Type

/**
 * Brands an id string without checking (for ids read back from trusted storage).
 *
 * @since 0.1.0
 */
export const unsafe = <B extends Brand.Brand<any>>(s: string): string & B => s as string & B
