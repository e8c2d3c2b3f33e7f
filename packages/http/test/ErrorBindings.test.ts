import { describe, expect, it } from "@effect/vitest"
import { Errors, Store } from "@recur/core"
import { ErrorReplies } from "@recur/contract"
import { Cause } from "effect"
import * as SqlError from "effect/sql/SqlError"
import { ErrorBindings } from "@recur/http"

// one instance of every error core can raise, and the answer the contract gives it
const cases: ReadonlyArray<readonly [Errors.RecurError, string, string, string | undefined]> = [
  [new Errors.NotFound({ resource: "price", id: "pri_x" }), "NotFound", "resource_not_found", undefined],
  // an id a body references that names nothing: 404 naming the field
  [
    new Errors.NotFound({ resource: "price", id: "pri_x", param: "line_items[0].price_id" }),
    "NotFound",
    "resource_not_found",
    "line_items[0].price_id"
  ],
  [
    new Errors.SessionRefused({ reason: "price", rateGiven: false, detail: "no such price", missing: true }),
    "NotFound",
    "resource_not_found",
    "line_items[0].price_id"
  ],
  [
    new Errors.SessionRefused({ reason: "discount", rateGiven: false, detail: "no such discount code", missing: true }),
    "NotFound",
    "resource_not_found",
    "discount_code"
  ],
  [
    new Errors.SessionRefused({ reason: "discount", rateGiven: false, detail: "has ended" }),
    "InvalidParameter",
    "InvalidParameter",
    "discount_code"
  ],
  [
    new Errors.PriceChangeRefused({ subscriptionId: "sub_x", priceId: "pri_y", reason: "not_found", detail: "d" }),
    "NotFound",
    "resource_not_found",
    "price_id"
  ],
  [new Errors.InvalidParameter({ param: "limit", reason: "bad" }), "InvalidParameter", "InvalidParameter", "limit"],
  [new Errors.InvalidRequest({ reason: "both cursors" }), "InvalidRequest", "invalid_request_error", undefined],
  [
    new Errors.StateConflict({ resource: "subscription", id: "sub_x", state: "canceled", reason: "no" }),
    "Conflict",
    "state_conflict",
    undefined
  ],
  [
    new Errors.DuplicateResource({ resource: "price", param: "merchant_price_id" }),
    "Conflict",
    "duplicate_resource",
    "merchant_price_id"
  ],
  [new Errors.Unauthorized(), "Unauthorized", "unauthorizedError", undefined],
  [new Errors.PriceNotFound({ priceId: "pri_x" }), "NotFound", "resource_not_found", undefined],
  [
    new Errors.SessionRefused({ reason: "rate", rateGiven: true, detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "merchant_rate"
  ],
  [
    new Errors.SessionRefused({ reason: "rate", rateGiven: false, detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "target_currency"
  ],
  [new Errors.SessionNotPayable({ sessionId: "ses_x", state: "complete" }), "Conflict", "state_conflict", undefined],
  [new Errors.CardInvalid({ sessionId: "ses_x" }), "InvalidParameter", "InvalidParameter", "card_number"],
  [
    new Errors.SubscriptionNotLive({ subscriptionId: "sub_x", state: "canceled", action: "change" }),
    "Conflict",
    "state_conflict",
    undefined
  ],
  [
    new Errors.PriceChangeRefused({ subscriptionId: "sub_x", priceId: "pri_y", reason: "interval", detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "price_id"
  ],
  [
    new Errors.QuantityRefused({ subscriptionId: "sub_x", detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "quantity"
  ],
  [new Errors.QuoteExpired({ quoteId: "quo_1_x" }), "Conflict", "state_conflict", undefined],
  [new Errors.QuoteStale({ quoteId: "quo_1_x", subscriptionId: "sub_x" }), "Conflict", "state_conflict", undefined],
  [
    new Errors.SubscriptionActionRefused({ subscriptionId: "sub_x", state: "past_due", action: "renew", reason: "r" }),
    "Conflict",
    "state_conflict",
    undefined
  ],
  [new Errors.TradeNotFound({ tradeId: "trd_x" }), "NotFound", "resource_not_found", undefined],
  [new Errors.TradeNotRefundable({ tradeId: "trd_x", state: "failed" }), "Conflict", "state_conflict", undefined],
  [
    new Errors.RefundRefused({ tradeId: "trd_x", reason: "above_refundable", detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "amount"
  ],
  [
    new Errors.UsageRefused({ subscriptionId: "sub_x", reason: "count", detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "usage_count"
  ],
  [new Errors.MeterEventRefused({ field: "code", detail: "d" }), "InvalidParameter", "InvalidParameter", "code"],
  [
    new Errors.MeterEventRefused({ index: 2, field: "properties", property: "gb", detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "events[2].properties.gb"
  ],
  [new Errors.MeterEventRefused({ field: "events", detail: "d" }), "InvalidParameter", "InvalidParameter", "events"],
  [
    new Errors.UsageRefused({ subscriptionId: "sub_x", index: 3, reason: "not_metered", detail: "d" }),
    "InvalidParameter",
    "InvalidParameter",
    "records[3].subscription_id"
  ],
  [new Errors.UsageBatchRefused({ size: 0, max: 1000 }), "InvalidParameter", "InvalidParameter", "records"],
  [
    new Errors.ScheduleRefused({ subscriptionId: "sub_x", phase: 1, part: "end_date", detail: "no period boundary" }),
    "InvalidParameter",
    "InvalidParameter",
    "phases[1].end_date"
  ],
  [
    new Errors.ScheduleRefused({
      subscriptionId: "sub_x",
      phase: 0,
      part: "price",
      missing: true,
      detail: "no such price"
    }),
    "NotFound",
    "resource_not_found",
    "phases[0].items[0].price_id"
  ],
  [
    new Errors.ItemChangeRefused({ subscriptionId: "sub_x", part: "deleted", index: 2, detail: "the base item" }),
    "InvalidParameter",
    "InvalidParameter",
    "items[2].deleted"
  ],
  [
    new Errors.ItemChangeRefused({
      subscriptionId: "sub_x",
      part: "id",
      index: 0,
      missing: true,
      detail: "no such item"
    }),
    "NotFound",
    "resource_not_found",
    "items[0].id"
  ],
  [new Errors.ConcurrentUpdate({ resource: "subscription", id: "sub_x" }), "Conflict", "state_conflict", undefined],
  [
    new Errors.PaymentsUnavailable({
      merchantId: "mch_x",
      reason: "merchant mch_x is live and has no payment processor"
    }),
    "Conflict",
    "state_conflict",
    undefined
  ],
  [
    new Errors.ProcessorUnreachable({ detail: "Stripe did not answer" }),
    "ServiceUnavailable",
    "service_unavailable",
    undefined
  ]
]

describe("error bindings", () => {
  it("every error of core has one answer: its envelope, code, request id and the field it names", () => {
    expect(new Set(cases.map(([e]) => e._tag))).toEqual(new Set(Object.keys(ErrorBindings.bindings)))
    expect(cases.length).toBeGreaterThanOrEqual(Object.keys(ErrorBindings.bindings).length)
    for (const [error, envelope, code, param] of cases) {
      const answer = ErrorBindings.toApiError("req_1")(error)
      expect([error._tag, answer.constructor.name, answer.code]).toEqual([error._tag, envelope, code])
      const data = (answer as { data?: { request_id?: string; param?: string } }).data
      expect(data?.request_id).toBe("req_1")
      expect(data?.param).toBe(param)
      // the message is the domain error's own words (the 401 never says why)
      if (error._tag !== "Unauthorized") expect(answer.message).toBe(error.message)
    }
  })
})

describe("lost races", () => {
  it("a store's or a database's conflict, raised as an error or a defect, is a 409 state_conflict; anything else is not", () => {
    const serialization = new SqlError.SqlError({
      reason: new SqlError.SerializationError({ cause: new Error("could not serialize access"), message: "40001" })
    })
    for (const cause of [
      Cause.die(new Store.VersionConflict({ entity: "subscription", id: "sub_x" })),
      Cause.fail(new Store.VersionConflict({ entity: "subscription", id: "sub_x" })),
      Cause.die(new Store.UniqueViolation({ entity: "payment_method", constraint: "one_default" })),
      Cause.die(new Errors.ConcurrentUpdate({ resource: "discount", id: "dsc_x" })),
      Cause.die(serialization)
    ]) {
      const race = ErrorReplies.lostRace(cause)
      expect(race?._tag).toBe("ConcurrentUpdate")
      expect(ErrorReplies.replyTo(race!)).toMatchObject({ code: "state_conflict", httpStatus: 409 })
    }
    expect(ErrorReplies.lostRace(Cause.die(new Error("boom")))).toBeUndefined()
    expect(ErrorReplies.lostRace(Cause.fail(new Errors.NotFound({ resource: "price", id: "p" })))).toBeUndefined()
  })
})
