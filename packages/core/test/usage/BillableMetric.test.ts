import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { BillableMetric, Lifecycle } from "../../src/index.js"

const made = (input: BillableMetric.MetricCommand) => BillableMetric.checkNew(input)

describe("BillableMetric", () => {
  it("the issue's three metrics check, with defaults and trimmed names", () => {
    const calls = made({ code: "api_calls", name: " API calls ", aggregation: "count", group_by: [" region "] })
    const storage = made({ code: "storage", name: "Storage", aggregation: "weighted_sum", property: "gb" })
    const users = made({ code: "active_users", name: "Users", aggregation: "unique_count", property: "user_id" })
    expect(Result.getOrThrow(calls)).toEqual({
      code: "api_calls",
      name: "API calls",
      description: null,
      aggregation: "count",
      property: null,
      filters: [],
      group_by: ["region"],
      late_window_days: 35
    })
    expect(Result.getOrThrow(storage).property).toBe("gb")
    expect(Result.getOrThrow(users).aggregation).toBe("unique_count")
  })

  it("every aggregation but count needs a property; count takes none", () => {
    for (const aggregation of ["sum", "max", "unique_count", "latest", "weighted_sum"]) {
      const r = made({ code: "m", name: "M", aggregation })
      expect([aggregation, Result.isFailure(r) && r.failure.param]).toEqual([aggregation, "property"])
    }
    const counted = made({ code: "m", name: "M", aggregation: "count", property: "n" })
    expect(Result.isFailure(counted) && counted.failure.param).toBe("property")
    expect(Result.isSuccess(made({ code: "m", name: "M", aggregation: "count", property: null }))).toBe(true)
  })

  it("codes: 1 to 64 of a-z 0-9 _", () => {
    for (const code of ["a", "api_calls", "x".repeat(64), "0_9"])
      expect([code, Result.isSuccess(made({ code, name: "M", aggregation: "count" }))]).toEqual([code, true])
    for (const code of ["", "A", "api-calls", "api calls", "x".repeat(65), "é"])
      expect([code, Result.isSuccess(made({ code, name: "M", aggregation: "count" }))]).toEqual([code, false])
  })

  it("a price's group must give exactly one value per grouping property", () => {
    const perRegion = { group_by: ["region"] }
    const none = { group_by: [] }
    expect(BillableMetric.groupRefusal(perRegion, { region: "eu" })).toBeUndefined()
    expect(BillableMetric.groupRefusal(none, null)).toBeUndefined()
    expect(BillableMetric.groupRefusal(none, {})).toBeUndefined()
    expect(BillableMetric.groupRefusal(perRegion, null)).toBe("must give a value for region")
    expect(BillableMetric.groupRefusal(perRegion, { region: "eu", plan: "pro" })).toMatch(/plan is not one/)
    expect(BillableMetric.groupRefusal(perRegion, { region: "" })).toMatch(/1 to 255/)
    expect(BillableMetric.groupRefusal(none, { region: "eu" })).toMatch(/no group_by/)
  })

  it("the machine: updates keep a metric active, archiving is final", () => {
    expect(Result.getOrThrow(Lifecycle.transition(Lifecycle.billableMetric, "active", "update"))).toEqual({
      to: "active",
      events: ["v2.billable_metric.updated"]
    })
    expect(Result.getOrThrow(Lifecycle.transition(Lifecycle.billableMetric, "active", "archive")).to).toBe("archived")
    expect(Lifecycle.triggersFrom(Lifecycle.billableMetric, "archived")).toEqual([])
  })
})
