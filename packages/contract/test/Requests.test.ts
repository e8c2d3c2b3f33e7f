import { describe, expect, it } from "@effect/vitest"
import { ErrorReplies, Requests } from "@recur/contract"
import { Checkout, Errors, Ids, PriceRules } from "@recur/core"
import { Effect } from "effect"

const priceId = Ids.encode("pri", Date.UTC(2026, 0, 1), new Uint8Array(10).fill(7))

describe("session requests", () => {
  it.effect(
    "a body with a price, a quantity and a code decodes to the command core's sessionOf builds in code",
    () =>
      Effect.gen(function* () {
        const decoded = yield* Requests.sessionCommand({
          payer_id: "user-42",
          line_items: [{ price_id: priceId, quantity: "3" }],
          discount_code: "SPRING25"
        })
        expect(decoded).toEqual(
          Checkout.sessionOf(priceId, { payerId: "user-42" }, { quantity: 3n, discountCode: "SPRING25" })
        )
        const bare = yield* Requests.sessionCommand({ email: "a@b.co", line_items: [{ price_id: priceId }] })
        expect(bare).toEqual(Checkout.sessionOf(priceId, { email: "a@b.co" }))
      }),
    10_000
  )

  it.effect(
    "what the body gets wrong names the request field, as the API spells its path",
    () =>
      Effect.gen(function* () {
        const refused = (body: Requests.SessionRequest) =>
          Effect.map(Effect.flip(Requests.sessionCommand(body)), (e) => ErrorReplies.replyTo(e))
        // a price that does not exist is a missing reference: 404 naming the field (issue 32 (3))
        expect(yield* refused({ payer_id: "p", line_items: [{ price_id: "not-a-price" }] })).toEqual({
          reply: "not_found",
          code: "resource_not_found",
          httpStatus: 404,
          param: "line_items[0].price_id"
        })
        expect(yield* refused({ payer_id: "p", line_items: [{ price_id: priceId, quantity: "0" }] })).toMatchObject({
          param: "line_items[0].quantity"
        })
        expect(
          yield* refused({ payer_id: "p", line_items: [{ price_id: priceId }], return_url: "javascript:alert(1)" })
        ).toMatchObject({ param: "return_url" })
      }),
    10_000
  )
})

describe("price refusals", () => {
  it("a price's broken rules are the InvalidParameter of the request field each is about, the first in param", () => {
    const refused = Requests.refusal(
      new PriceRules.PriceRuleViolation({
        issues: [
          new PriceRules.Issue({
            field: "due_price",
            tier: { list: "price_plan_tiers", index: 2 },
            message: "is required unless discount_type and discount_value are given"
          }),
          new PriceRules.Issue({ field: "min", tier: { list: "usage_tiers", index: 1 }, message: "must be 101" }),
          new PriceRules.Issue({ field: "currency", message: "is required" })
        ]
      })
    )
    expect(refused).toBeInstanceOf(Errors.InvalidParameter)
    expect({ ...refused }).toEqual({
      _tag: "InvalidParameter",
      param: "price_plan.price_plan_tiers[2].due_price",
      reason: "is required unless discount_type and discount_value are given",
      issues: [
        {
          field: "price_plan.price_plan_tiers[2].due_price",
          message: "is required unless discount_type and discount_value are given"
        },
        { field: "usage_tiers[1].min", message: "must be 101" },
        { field: "currency", message: "is required" }
      ]
    })
  })
})

describe("error replies", () => {
  it("core's domain errors meet the contract here: a session refused on its quantity names the line item's field", () => {
    const e = new Errors.SessionRefused({ reason: "quantity", rateGiven: false, detail: "too many" })
    expect(ErrorReplies.replyTo(e)).toMatchObject({ code: "InvalidParameter", httpStatus: 400 })
    expect(ErrorReplies.replyTo(e).param).toBe("line_items[0].quantity")
    expect(
      ErrorReplies.replyTo(
        new Errors.UsageRefused({ subscriptionId: "sub_x", index: 2, reason: "count", detail: "negative" })
      ).param
    ).toBe("records[2].usage_count")
  })
})
