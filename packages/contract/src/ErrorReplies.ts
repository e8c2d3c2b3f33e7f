/**
 * How the merchant API answers each failure of the engine — declared once, for every error core
 * can raise (the mapped type makes a missing one a compile error): the kind of answer it becomes
 * (and so its code and HTTP status), and the request field it names in `param`. Core's errors
 * name ids and states, never request fields or statuses; this table is where they meet the
 * contract. The REST adapter (`@recur/http`) and the Promise facade (`@recur/embedded`) both
 * answer from it, so the same failure has the same code and status in both.
 *
 * @since 0.1.0
 */
import { Errors } from "@recur/core"
import { Cause } from "effect"

/**
 * The envelope an error becomes: `invalid_parameter` (400 `InvalidParameter`),
 * `invalid_request` (400 `invalid_request_error`), `unauthorized` (401), `not_found` (404
 * `resource_not_found`), `conflict` (409 `state_conflict`), `duplicate` (409
 * `duplicate_resource`) or `unavailable` (503 `service_unavailable`: a processor that must answer
 * first did not; nothing changed, retry).
 *
 * @since 0.1.0
 */
export type Reply =
  | "invalid_parameter"
  | "invalid_request"
  | "unauthorized"
  | "not_found"
  | "conflict"
  | "duplicate"
  | "unavailable"

/**
 * One error's binding.
 *
 * @since 0.1.0
 */
export interface Binding<E> {
  /** The kind of answer, or how the error's own fields choose it (a refused reference that does not exist is `not_found`). */
  readonly reply: Reply | ((e: E) => Reply)
  /** The request field at fault, when there is one. */
  readonly param?: (e: E) => string | undefined
}

const sessionFields = {
  customer: "customer_id",
  price: "line_items[0].price_id",
  payment_mode: "payment_mode",
  quantity: "line_items[0].quantity",
  amount: "amount",
  no_rate: "target_currency",
  rate: "target_currency",
  return_url: "return_url",
  cancel_url: "cancel_url",
  discount: "discount_code",
  billing_cycle_anchor: "billing_cycle_anchor"
} as const

const usageFields = {
  count: "usage_count",
  event_id: "event_id",
  instant: "timestamp",
  not_metered: "subscription_id",
  above_bound: "usage_count"
} as const

const scheduleFields = {
  start: "start",
  items: "items",
  price: "price_id",
  quantity: "quantity",
  cycles: "cycles",
  end_date: "end_date",
  discount: "discount_code"
} as const

/**
 * The request's name of a parameter a core error names, with the entry of its list when it names
 * one (`adjust_quantities` entry 0, field `max` → `adjust_quantities[0].max`): core names no
 * request path, the adapters (REST, the CLI, the facade's configuration) name it this way.
 *
 * @example
 * paramName("adjust_quantities", { index: 0, field: "max" }) // "adjust_quantities[0].max"
 * paramName("remove_lines", { index: 1, field: "" }) // "remove_lines[1]" (the entry itself)
 * @since 0.1.0
 */
export const paramName = (
  param: string,
  entry: { readonly index: number; readonly field: string } | undefined
): string =>
  entry === undefined
    ? param
    : entry.field === ""
      ? `${param}[${entry.index}]`
      : `${param}[${entry.index}].${entry.field}`

/**
 * Every error of core, bound to its answer.
 *
 * @since 0.1.0
 */
export const bindings: {
  readonly [K in Errors.RecurError["_tag"]]: Binding<Extract<Errors.RecurError, { readonly _tag: K }>>
} = {
  NotFound: {
    reply: "not_found",
    param: (e) => (e.param === undefined ? e.param : paramName(e.param, e.entry))
  },
  InvalidParameter: {
    reply: "invalid_parameter",
    param: (e) => paramName(e.param, e.entry)
  },
  InvalidRequest: { reply: "invalid_request", param: (e) => e.param },
  StateConflict: { reply: "conflict" },
  DuplicateResource: { reply: "duplicate", param: (e) => e.param },
  Unauthorized: { reply: "unauthorized" },
  PriceNotFound: { reply: "not_found" },
  SessionRefused: {
    reply: (e) => (e.missing === true ? "not_found" : "invalid_parameter"),
    param: (e) =>
      e.reason === "rate" && e.rateGiven
        ? "merchant_rate"
        : e.item !== undefined && (e.reason === "price" || e.reason === "quantity")
          ? `line_items[${e.item}].${e.reason === "price" ? "price_id" : "quantity"}`
          : sessionFields[e.reason]
  },
  SessionNotPayable: { reply: "conflict" },
  CardInvalid: { reply: "invalid_parameter", param: () => "card_number" },
  SubscriptionNotLive: { reply: "conflict" },
  SubscriptionActionRefused: { reply: "conflict" },
  PriceChangeRefused: {
    reply: (e) => (e.reason === "not_found" ? "not_found" : "invalid_parameter"),
    param: (e) => (e.reason === "proration" ? "proration" : "price_id")
  },
  ItemChangeRefused: {
    reply: (e) => (e.missing === true ? "not_found" : "invalid_parameter"),
    param: (e) => (e.index !== undefined ? `items[${e.index}].${e.part}` : e.part)
  },
  QuantityRefused: { reply: "invalid_parameter", param: () => "quantity" },
  QuoteExpired: { reply: "conflict" },
  QuoteStale: { reply: "conflict" },
  TradeNotFound: { reply: "not_found" },
  TradeNotRefundable: { reply: "conflict" },
  RefundRefused: { reply: "invalid_parameter", param: () => "amount" },
  UsageRefused: {
    reply: "invalid_parameter",
    // the single-event endpoint names the field; the batch endpoint the record it is in
    param: (e) => `${e.index !== undefined ? `records[${e.index}].` : ""}${usageFields[e.reason]}`
  },
  UsageBatchRefused: { reply: "invalid_parameter", param: () => "records" },
  MeterEventRefused: {
    reply: "invalid_parameter",
    // the batch endpoint names the event (`events[3].properties.gb`)
    param: (e) =>
      `${e.index !== undefined ? `events[${e.index}].` : ""}${e.field}${e.property !== undefined ? `.${e.property}` : ""}`
  },
  ScheduleRefused: {
    reply: (e) => (e.missing === true ? "not_found" : "invalid_parameter"),
    param: (e) =>
      `${e.phase !== undefined ? `phases[${e.phase}].` : ""}${e.part === "price" || e.part === "quantity" ? `items[${e.item ?? 0}].` : ""}${scheduleFields[e.part]}`
  },
  ConcurrentUpdate: { reply: "conflict" },
  PaymentsUnavailable: { reply: "conflict" },
  ProcessorUnreachable: { reply: "unavailable" }
}

/**
 * The code and HTTP status of each kind of answer, as the API documents them.
 *
 * @since 0.1.0
 */
export const answers: { readonly [K in Reply]: { readonly code: string; readonly httpStatus: number } } = {
  invalid_parameter: { code: "InvalidParameter", httpStatus: 400 },
  invalid_request: { code: "invalid_request_error", httpStatus: 400 },
  unauthorized: { code: "unauthorizedError", httpStatus: 401 },
  not_found: { code: "resource_not_found", httpStatus: 404 },
  conflict: { code: "state_conflict", httpStatus: 409 },
  duplicate: { code: "duplicate_resource", httpStatus: 409 },
  unavailable: { code: "service_unavailable", httpStatus: 503 }
}

/**
 * The answer to one of core's errors: its kind, code, HTTP status and the request field at fault.
 *
 * @since 0.1.0
 */
export const replyTo = (
  e: Errors.RecurError
): {
  readonly reply: Reply
  readonly code: string
  readonly httpStatus: number
  readonly param: string | undefined
} => {
  const binding = bindings[e._tag] as Binding<Errors.RecurError>
  const reply = typeof binding.reply === "function" ? binding.reply(e) : binding.reply
  return { reply, ...answers[reply], param: binding.param?.(e) }
}

/** The storage errors that mean "another writer got there first" (a store's or a database's own). */
const raceTags: ReadonlySet<string> = new Set([
  "VersionConflict",
  "ConcurrentUpdate",
  "UniqueViolation",
  "DeadlockError",
  "SerializationError",
  "LockTimeoutError"
])

const raceIn = (u: unknown, depth: number): { readonly entity?: string; readonly id?: string } | undefined => {
  if (typeof u !== "object" || u === null || depth > 4) return undefined
  const e = u as { _tag?: unknown; reason?: unknown; cause?: unknown; entity?: unknown; id?: unknown }
  if (typeof e._tag === "string" && raceTags.has(e._tag))
    return {
      ...(typeof e.entity === "string" ? { entity: e.entity } : {}),
      ...(typeof e.id === "string" ? { id: e.id } : {})
    }
  // a SQL driver's error carries its kind as `reason`; a wrapped one as `cause`
  return raceIn(e.reason, depth + 1) ?? raceIn(e.cause, depth + 1)
}

/**
 * A lost race anywhere in a failed call's cause — a store's `VersionConflict` or
 * `UniqueViolation`, the engine's `ConcurrentUpdate`, a database's serialization failure,
 * deadlock or lock timeout, whether raised as an error or as a defect — as the engine's
 * {@link Errors.ConcurrentUpdate} (409 `state_conflict`: nothing was changed, retry), or
 * undefined when the call failed for another reason. The one place both the REST adapter and the
 * Promise facade turn a race into an answer, instead of a 500.
 *
 * @since 0.1.0
 */
export const lostRace = (cause: Cause.Cause<unknown>): Errors.ConcurrentUpdate | undefined => {
  for (const reason of cause.reasons) {
    const found = Cause.isFailReason(reason)
      ? raceIn(reason.error, 0)
      : Cause.isDieReason(reason)
        ? raceIn(reason.defect, 0)
        : undefined
    if (found !== undefined)
      return new Errors.ConcurrentUpdate({ resource: found.entity ?? "record", id: found.id ?? "" })
  }
  return undefined
}
