import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { PriceRules } from "../../src/index.js"

const monthly = {
  name: "Pro",
  product_id: "prd_01",
  currency: "USD",
  billing_type: "recurring",
  price_type: "flat_price",
  price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "30.00" }
} satisfies PriceRules.PriceInput

const fields = (input: PriceRules.PriceInput): ReadonlyArray<string> => {
  const r = PriceRules.validate(input)
  return Result.isFailure(r)
    ? r.failure.issues.map((i) => (i.tier ? `${i.tier.list} #${i.tier.index} ${i.field}` : i.field))
    : []
}

describe("PriceRules.validate", () => {
  it("accepts a plain monthly price and applies defaults", () => {
    const ok = Result.getOrThrow(PriceRules.validate({ ...monthly, merchant_price_id: "  pro-monthly:v1/usd  " }))
    expect(ok).toMatchObject({
      status: "active",
      payment_timing: "prepaid",
      billing_dimension: "quantity",
      has_trial: false,
      merchant_price_id: "pro-monthly:v1/usd"
    })
  })

  it.each([
    ["one_time needs price_val", { ...monthly, billing_type: "one_time", price_plan: undefined }, "price_val"],
    ["recurring needs price_plan", { ...monthly, price_plan: undefined }, "price_plan"],
    [
      "based_on_usage needs model_type",
      {
        ...monthly,
        price_type: "based_on_usage",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call"
      },
      "model_type"
    ],
    [
      "per_unit needs billing_threshold",
      {
        ...monthly,
        price_type: "based_on_usage",
        model_type: "per_unit",
        usage_unit_price: "0.01",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call"
      },
      "billing_threshold"
    ],
    [
      "package_price needs usage_amount",
      { ...monthly, price_type: "package_price", usage_unit: "seat" },
      "usage_amount"
    ],
    ["package_price needs usage_unit", { ...monthly, price_type: "package_price", usage_amount: "10" }, "usage_unit"],
    [
      "trial_type 1 needs trial_amount",
      { ...monthly, has_trial: true, trial_type: 1, trial_period: { trial_period_unit: "day", trial_period_count: 7 } },
      "trial_amount"
    ],
    ["has_trial needs trial_period", { ...monthly, has_trial: true, trial_type: 0 }, "trial_period"],
    ["mixed is rejected", { ...monthly, billing_dimension: "mixed" }, "billing_dimension"],
    ["(prepaid, usage) is rejected", { ...monthly, billing_dimension: "usage" }, "billing_dimension"],
    ["(postpaid, quantity) is rejected", { ...monthly, payment_timing: "postpaid" }, "billing_dimension"],
    ["merchant_price_id charset", { ...monthly, merchant_price_id: "pro monthly" }, "merchant_price_id"],
    ["merchant_price_id length", { ...monthly, merchant_price_id: "x".repeat(101) }, "merchant_price_id"],
    [
      "too many decimals for the currency",
      { ...monthly, price_plan: { ...monthly.price_plan, base_price_val: "30.001" } },
      "price_plan.base_price_val"
    ],
    [
      "JPY has no minor unit",
      { ...monthly, currency: "JPY", price_plan: { ...monthly.price_plan, base_price_val: "300.5" } },
      "price_plan.base_price_val"
    ],
    ["unknown currency", { ...monthly, currency: "XYZ" }, "currency"],
    [
      "bad cycle unit",
      { ...monthly, price_plan: { ...monthly.price_plan, billing_cycle_unit: "fortnight" } },
      "price_plan.billing_cycle_unit"
    ],
    [
      "over_threshold needs usage_threshold",
      {
        ...monthly,
        price_type: "based_on_usage",
        model_type: "per_unit",
        billing_threshold: "1",
        usage_unit_price: "0.1",
        payment_timing: "postpaid",
        billing_dimension: "usage",
        usage_amount: "1",
        usage_unit: "call",
        price_plan: { ...monthly.price_plan, billing_cycle_unit: "over_threshold" }
      },
      "usage_threshold"
    ],
    ["missing name", { ...monthly, name: " " }, "name"]
  ] as const)("%s", (_, input, field) => {
    const r = PriceRules.validate(input as PriceRules.PriceInput)
    expect(Result.isFailure(r)).toBe(true)
    expect(fields(input as PriceRules.PriceInput)).toContain(field)
  })

  it("reports every issue, the first first", () => {
    const r = PriceRules.validate({ currency: "USD" })
    expect(Result.isFailure(r) && r.failure.issues[0].field).toBe("name")
    expect(fields({ currency: "USD" })).toEqual(["name", "product_id", "billing_type", "price_type"])
  })

  const tier = (min: string, max: string, unit = "0.10") => ({
    usage_min: min,
    usage_max: max,
    unit_price: unit,
    flat_amount: ""
  })
  const usagePrice = (usage_tiers: ReadonlyArray<ReturnType<typeof tier>>) => ({
    ...monthly,
    price_type: "based_on_usage",
    model_type: "tiers_price",
    payment_timing: "postpaid",
    billing_dimension: "usage",
    usage_amount: "1",
    usage_unit: "call",
    price_tier_type: "graduated",
    usage_tiers
  })

  it("accepts ordered, contiguous tiers whose last is open-ended", () => {
    expect(fields(usagePrice([tier("0", "100", "0.20"), tier("101", "500", "0.15"), tier("501", "", "0.10")]))).toEqual(
      []
    )
  })

  it.each([
    ["a gap", [tier("0", "100"), tier("102", "")], "usage_tiers #1 min"],
    ["an overlap", [tier("0", "100"), tier("100", "")], "usage_tiers #1 min"],
    ["a closed last tier", [tier("0", "100"), tier("101", "200")], "usage_tiers #1 max"],
    ["an open middle tier", [tier("0", ""), tier("101", "")], "usage_tiers #0 max"],
    ["a first tier above 1", [tier("5", "")], "usage_tiers #0 min"],
    ["a negative unit price", [tier("0", "", "-1")], "usage_tiers #0 unit_price"],
    [
      "more than 10 tiers",
      Array.from({ length: 11 }, (_, i) =>
        tier(String(i * 10 + (i === 0 ? 0 : 1)), i === 10 ? "" : String(i * 10 + 10))
      ),
      "usage_tiers"
    ]
  ] as const)("rejects tiers with %s", (_, tiers, field) => {
    expect(fields(usagePrice(tiers))).toContain(field)
  })

  it("a plan's phase at fault is named by its index and its field, not by a request path", () => {
    const r = PriceRules.validate({
      ...monthly,
      price_plan: {
        ...monthly.price_plan,
        price_plan_tiers: [
          { period_count: 1, due_price: "10.00" },
          { period_count: 0, discount_type: "percentage", discount_value: "120" }
        ]
      }
    })
    expect(Result.isFailure(r) && r.failure.issues.map((i) => ({ ...i }))).toEqual([
      { field: "period_count", tier: { list: "price_plan_tiers", index: 1 }, message: "must be a whole number ≥ 1" },
      { field: "discount_value", tier: { list: "price_plan_tiers", index: 1 }, message: "a percentage is at most 100" }
    ])
  })

  it("quantity is 1..999999999", () => {
    expect(Result.getOrThrow(PriceRules.validateQuantity("quantity", "999999999"))).toBe(999_999_999n)
    expect(Result.getOrThrow(PriceRules.validateQuantity("quantity", 1))).toBe(1n)
    for (const bad of ["0", "1000000000", "-1", "1.5", "", "abc", 2.5]) {
      expect(Result.isFailure(PriceRules.validateQuantity("quantity", bad))).toBe(true)
    }
  })
})
