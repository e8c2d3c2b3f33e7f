/**
 * What every group of the Promise facade shares: running an effect on the engine as a Promise,
 * checking input as the REST API checks the same body, and answering the REST API's JSON.
 *
 * @since 0.1.0
 */
import { Errors, type Store } from "@recur/core"
import { Effect, Schema } from "effect"
import * as FacadeErrors from "../Errors.js"
import type { Answer, PageInput, PageJson } from "./Types.js"

/**
 * The shared helpers, bound to one engine (`S`: its services).
 *
 * @since 0.1.0
 */
export interface Kit<S> {
  /** Runs an effect on the engine; a failure rejects with the facade's error for it. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, S>) => Promise<A>
}

/** Input checked as the REST API checks the same body. */
export const decode = <S extends Schema.Codec<unknown, unknown>>(schema: S, input: unknown) =>
  Effect.mapError(Schema.decodeUnknownEffect(schema)(input), (e) => FacadeErrors.invalidInput(e.issue))

/**
 * A query filter's or an argument's value (`status`, `trade_status`, `type` …) checked against
 * its values: a wrong one is `InvalidParameter` naming that filter — as the REST API names the
 * query parameter — never `body` or an array index.
 */
export const named = <S extends Schema.Codec<unknown, unknown>>(param: string, schema: S, value: unknown) =>
  Effect.mapError(Schema.decodeUnknownEffect(schema)(value), (e) => {
    const first = FacadeErrors.invalidInput(e.issue)
    const given = JSON.stringify(value)
    return new Errors.InvalidParameter({
      param,
      reason: `${first.reason}, not ${given.length > 60 ? `${given.slice(0, 60)}…` : given}`
    })
  })

/** A path id: a string, or `InvalidParameter` naming it. */
export const id = (param: string, value: unknown) => decode(Schema.String.annotate({ identifier: param }), value)

/**
 * Results are the JSON the REST API returns (timestamps as RFC 3339 strings), not Effect values.
 * Encoding writes every field of the value, so the fields decoding fills by default are there.
 */
export const json =
  <S extends Schema.Codec<any, any>>(schema: S) =>
  (a: S["Type"]): Answer<S> =>
    Schema.encodeSync(schema)(a) as Answer<S>

/** A page of records as JSON. */
export const pageJson =
  <S extends Schema.Codec<any, any>>(schema: S) =>
  (p: { readonly has_more: boolean; readonly list: ReadonlyArray<S["Type"]> }): PageJson<Answer<S>> => ({
    has_more: p.has_more,
    list: p.list.map(json(schema))
  })

/**
 * A list's cursor, checked as the REST API checks its query: `limit` a whole number from 1 to
 * 100 (default 10), at most one of `starting_after` and `ending_before`.
 */
export const page = (
  input: PageInput = {},
  defaultLimit = 10
): Effect.Effect<
  Store.ListQuery & { readonly limit: number; readonly starting_after?: string; readonly ending_before?: string },
  Errors.InvalidParameter | Errors.InvalidRequest
> => {
  const limit = input.limit ?? defaultLimit
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    return Effect.fail(new Errors.InvalidParameter({ param: "limit", reason: "must be an integer from 1 to 100" }))
  if (input.starting_after !== undefined && input.ending_before !== undefined)
    return Effect.fail(
      new Errors.InvalidRequest({ reason: "starting_after and ending_before cannot be used together" })
    )
  return Effect.succeed({
    limit,
    ...(input.starting_after !== undefined ? { starting_after: input.starting_after } : {}),
    ...(input.ending_before !== undefined ? { ending_before: input.ending_before } : {})
  })
}

/** An `in` filter on a column when values are given. */
export const inFilter = (column: string, values: ReadonlyArray<string> | undefined): Array<Store.Filter> =>
  values === undefined || values.length === 0 ? [] : [{ column, op: "in", values }]
