import { Effect } from "effect"
import * as Errors from "./Errors.js"
import type * as Store from "./Store.js"

/** Maps the storage's page errors to the API's typed errors. */
export const pageErrors = <A, R>(effect: Effect.Effect<A, Store.CursorNotFound | Store.InvalidPage, R>) =>
  effect.pipe(
    Effect.catchTags({
      CursorNotFound: (e) =>
        Effect.fail(
          new Errors.InvalidRequest({ reason: `No such object for this cursor: ${e.cursor}`, param: "starting_after" })
        ),
      InvalidPage: (e) =>
        Effect.fail(
          e.reason === "both_cursors"
            ? new Errors.InvalidRequest({ reason: "starting_after and ending_before cannot be used together" })
            : new Errors.InvalidParameter({ param: "limit", reason: "must be between 1 and 100" })
        )
    })
  )

/** Checks an array filter's size. */
export const maxItems = (param: string, values: ReadonlyArray<unknown> | undefined, max: number) =>
  values !== undefined && values.length > max
    ? Effect.fail(new Errors.InvalidParameter({ param, reason: `at most ${max} values` }))
    : Effect.void
