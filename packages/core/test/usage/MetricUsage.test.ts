import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { MetricUsage, Price, SubscriptionItems } from "../../src/index.js"
import { priceVersion } from "../fixtures.js"

// Items billed by a billable metric (issue 35): the item rules and the group a price selects.

const plan = priceVersion()
const usage = (id: number, metric: string | null, group: Record<string, string> | null = null) =>
  priceVersion({
    id: `pri_01jd000000000000000000000${id}`,
    price_version_id: `prv_01jd000000000000000000000${id}`,
    price_type: "based_on_usage",
    model_type: "per_unit",
    payment_timing: "postpaid",
    billing_dimension: "usage",
    usage_unit_price: "0.50",
    billing_threshold: "1",
    usage_amount: "1",
    billable_metric_id: metric,
    metric_group: group,
    price_plan: new Price.PricePlan({ ...priceVersion().price_plan!, base_price_val: "0" })
  })

describe("items billed by a billable metric", () => {
  it("several beside the base item and one usage_count item; never the first item; a second usage_count item refused", () => {
    const eu = usage(2, "bm_calls", { region: "eu" })
    const us = usage(3, "bm_calls", { region: "us" })
    const gb = usage(4, "bm_storage")
    const seats = usage(5, null)
    expect(Result.isSuccess(SubscriptionItems.compatible([plan, eu, us, gb, seats]))).toBe(true)
    const first = SubscriptionItems.compatible([gb, plan])
    expect(Result.isFailure(first) && first.failure).toMatchObject({ index: 0 })
    expect(Result.isFailure(first) && first.failure.reason).toContain("never the first item")
    const alone = SubscriptionItems.compatible([gb])
    expect(Result.isFailure(alone) && alone.failure.index).toBe(0)
    const twice = SubscriptionItems.compatible([plan, seats, eu, usage(6, null)])
    expect(Result.isFailure(twice) && twice.failure.index).toBe(3)
    expect([Price.isMetricBased(eu), Price.isCountMetered(eu), Price.isMetricBased(seats)]).toEqual([
      true,
      false,
      false
    ])
  })

  it("a price's group selects its value; no group the ungrouped value; a group absent from the period is 0", () => {
    const values = [
      { group: ["us"], value: "3", events: 3 },
      { group: ["eu"], value: "2.5", events: 2 },
      { group: [null], value: "7", events: 7 }
    ]
    expect(MetricUsage.selectGroup(["region"], { region: "eu" }, values)).toEqual({ value: "2.5", events: 2 })
    expect(MetricUsage.selectGroup(["region"], { region: "ap" }, values)).toEqual({ value: "0", events: 0 })
    expect(MetricUsage.selectGroup([], null, [{ group: [], value: "12", events: 4 }])).toEqual({
      value: "12",
      events: 4
    })
    expect(
      MetricUsage.selectGroup(["region", "plan"], { plan: "pro", region: "eu" }, [
        { group: ["eu", "pro"], value: "1", events: 1 }
      ])
    ).toEqual({ value: "1", events: 1 })
  })
})
