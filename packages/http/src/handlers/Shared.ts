/**
 * What the handlers of every group share: the envelope, the call for the current merchant with
 * its errors mapped, and the parsing of list queries.
 *
 * @since 0.1.0
 */
import { Common, Errors, Merchants, type PriceChanges, type Store } from "@recur/core"
import { DateTime, Effect } from "effect"
import { CurrentMerchant } from "../api/Shared.js"
import * as ErrorBindings from "../ErrorBindings.js"

/** Any error of the engine's services. */
export type CoreError = Errors.RecurError

/** An answer in the envelope: `{code: "success", message: "success", data}`. */
export const ok = <A>(data: A) => ({ code: "success" as const, message: "success" as const, data })

/** Runs a service call for the current merchant, mapping its errors. */
export const call = <A, E extends CoreError, R>(
  f: (
    merchantId: string,
    merchant: { readonly merchant_id: string; readonly mode: string; readonly frozen_time: unknown }
  ) => Effect.Effect<A, E, R>
) =>
  // the merchant authenticated a moment ago: the services take its clock instead of reading it again
  Effect.flatMap(CurrentMerchant, ({ merchant, requestId }) =>
    Effect.mapError(
      Merchants.asCaller(merchant)(f(merchant.merchant_id, merchant)),
      ErrorBindings.toApiError(requestId)
    )
  )

/** `InvalidParameter` naming the query or body field at fault. */
export const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/** A query array's values: repeated keys or comma-separated, trimmed, empty ones dropped. */
export const list = (v: string | ReadonlyArray<string> | undefined): ReadonlyArray<string> | undefined =>
  v === undefined
    ? undefined
    : (typeof v === "string" ? [v] : v)
        .flatMap((s) => s.split(","))
        .map((s) => s.trim())
        .filter((s) => s !== "")

/** An RFC 3339 timestamp as epoch milliseconds, or `undefined`. */
export const instant = Common.parseInstant

/** Parses the common list query: limit (1..100, default 10), cursors and created_at ranges. */
export const pageQuery = (q: {
  readonly limit?: string | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
  readonly "created_at.gt"?: string | undefined
  readonly "created_at.gte"?: string | undefined
  readonly "created_at.lt"?: string | undefined
  readonly "created_at.lte"?: string | undefined
}) =>
  Effect.gen(function* () {
    let limit = 10
    if (q.limit !== undefined) {
      if (!/^\d{1,3}$/.test(q.limit) || Number(q.limit) < 1 || Number(q.limit) > 100)
        return yield* invalid("limit", "must be an integer from 1 to 100")
      limit = Number(q.limit)
    }
    if (q.starting_after !== undefined && q.ending_before !== undefined)
      return yield* new Errors.InvalidRequest({ reason: "starting_after and ending_before cannot be used together" })
    const created: Record<string, number> = {}
    for (const k of ["gt", "gte", "lt", "lte"] as const) {
      const v = q[`created_at.${k}`]
      if (v === undefined) continue
      const ms = instant(v)
      if (ms === undefined) return yield* invalid(`created_at.${k}`, "must be an RFC 3339 UTC timestamp")
      created[k] = ms
    }
    return {
      limit,
      starting_after: q.starting_after,
      ending_before: q.ending_before,
      created
    } satisfies Store.ListQuery & { created: Store.CreatedRange }
  })

/** An `in` filter on a column, when values are given (at most `max` of them). */
export const inFilter = (
  column: string,
  values: ReadonlyArray<string> | undefined,
  max?: number
): Effect.Effect<ReadonlyArray<Store.Filter>, Errors.InvalidParameter> =>
  values === undefined || values.length === 0
    ? Effect.succeed([])
    : max !== undefined && values.length > max
      ? Effect.fail(invalid(column, `at most ${max} values`))
      : Effect.succeed([{ column, op: "in", values }])

/**
 * The values of an enumerated filter (a status, a type), each checked against the values the
 * field can take: an unknown one is a 400 naming it (the contract), not an empty list.
 */
export const enumValues = (
  param: string,
  values: ReadonlyArray<string> | undefined,
  allowed: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string> | undefined, Errors.InvalidParameter> => {
  const unknown = values?.find((v) => !allowed.includes(v))
  return unknown === undefined
    ? Effect.succeed(values)
    : Effect.fail(invalid(param, `unknown value "${unknown.slice(0, 40)}"; expected one of ${allowed.join(", ")}`))
}

/** An `in` filter on an enumerated column, its values checked first ({@link enumValues}). */
export const enumFilter = (
  column: string,
  param: string,
  values: ReadonlyArray<string> | undefined,
  allowed: ReadonlyArray<string>
) => Effect.flatMap(enumValues(param, values, allowed), (checked) => inFilter(column, checked))

/** `merchant_id`, where the seed lists it, must be the caller's; anything else matches nothing. */
export const foreignMerchant = (given: string | undefined, merchantId: string) =>
  given !== undefined && given !== merchantId

const iso = (ms: number) => DateTime.formatIso(DateTime.makeUnsafe(Math.floor(ms / 1000) * 1000)).replace(".000Z", "Z")

/**
 * A change's quote as the API answers it: its instants as RFC 3339 strings.
 *
 * @since 0.1.0
 */
export const quoteJson = (q: PriceChanges.Quote) => {
  const { billed_at, ...rest } = q
  return {
    ...rest,
    effective_at: iso(q.effective_at),
    ...(billed_at !== undefined ? { billed_at: iso(billed_at) } : {})
  }
}
