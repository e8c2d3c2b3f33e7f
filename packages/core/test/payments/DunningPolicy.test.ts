import { describe, expect, it } from "@effect/vitest"
import { DunningPolicy } from "@recur/core"
import { DateTime } from "effect"
import fc from "fast-check"
import { prop } from "../prop.js"

const DAY = 86_400_000
const classes = ["hard", "soft", "expired_card"] as const
const action = fc.constantFrom<DunningPolicy.DeclineAction>("retry", "stop")
const rules = fc.record({ hard: action, soft: action, expired_card: action })
const days = fc
  .uniqueArray(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 10 })
  .map((d) => [...d].sort((a, b) => a - b))
const policy = fc.record({
  retryAfterMs: days.map((d) => d.map((n) => n * DAY)),
  finalState: fc.constantFrom<"unpaid" | "canceled">("unpaid", "canceled"),
  onDecline: rules
})

describe("DunningPolicy: what a decline's class does", () => {
  it("the standard rules: hard and expired stop, soft retries; a decline without a class is soft", () => {
    expect(DunningPolicy.standard.onDecline).toEqual({ hard: "stop", soft: "retry", expired_card: "stop" })
    expect(DunningPolicy.classOf(undefined)).toBe("soft")
    const first = { retriesDone: 0, pastDue: false, at: 0 }
    expect(DunningPolicy.decide(DunningPolicy.standard, { ...first, declineClass: "hard" })).toEqual(
      DunningPolicy.Step.Stop({ finalState: "unpaid", declineClass: "hard" })
    )
    expect(DunningPolicy.decide(DunningPolicy.standard, { ...first, declineClass: "expired_card" })._tag).toBe("Stop")
    expect(DunningPolicy.decide(DunningPolicy.standard, first)).toEqual(
      DunningPolicy.Step.Retry({ at: DAY, first: true })
    )
    // a policy written before classes (no onDecline) follows the standard rules
    expect(
      DunningPolicy.decide({ retryAfterMs: [DAY], finalState: "unpaid" }, { ...first, declineClass: "hard" })._tag
    ).toBe("Stop")
  }, 10_000)

  prop(
    "a class that stops ends at the failure itself; one that retries follows every offset from the first failure, then ends",
    [policy, fc.constantFrom(...classes), fc.integer({ min: 0, max: 4_000_000_000_000 })],
    ([p, declineClass, failedAt]) => {
      const { finalState, steps } = DunningPolicy.timeline(p, declineClass, failedAt)
      expect(finalState).toBe(p.finalState)
      expect(steps[0]).toEqual({ kind: "failed", at: failedAt, attempt: 0 })
      if (p.onDecline[declineClass] === "stop") {
        expect(steps).toEqual([steps[0], { kind: "stop", at: failedAt, attempt: 0 }])
        return
      }
      const retries = steps.filter((s) => s.kind === "retry")
      expect(retries.map((s) => s.at)).toEqual(p.retryAfterMs.map((ms) => failedAt + ms))
      expect(retries.map((s) => s.attempt)).toEqual(p.retryAfterMs.map((_, i) => i + 1))
      expect(steps.at(-1)).toEqual({
        kind: "exhausted",
        at: failedAt + p.retryAfterMs.at(-1)!,
        attempt: retries.length
      })
    }
  )

  prop(
    "the preview tells the timeline with the statuses after each step and how it ends",
    [policy, fc.constantFrom(...classes)],
    ([p, declineClass]) => {
      const at = Date.UTC(2026, 2, 10, 9, 30)
      const preview = DunningPolicy.preview(p, declineClass, at)
      expect(preview.action).toBe(p.onDecline[declineClass])
      expect(preview.dunning_retry_days).toEqual(p.retryAfterMs.map((ms) => ms / DAY))
      expect(DateTime.toEpochMillis(preview.failed_at)).toBe(at)
      const last = preview.steps.at(-1)!
      expect([last.subscription_status, last.invoice_status]).toEqual([p.finalState, "failed"])
      expect(preview.steps.slice(0, -1).every((s) => s.subscription_status === "past_due")).toBe(true)
      // no step says `retrying` when the class stops: no retry is ever scheduled
      expect(preview.steps.some((s) => s.invoice_status === "retrying")).toBe(
        p.onDecline[declineClass] === "retry" && preview.steps.length > 1
      )
      expect(DateTime.toEpochMillis(preview.ends_at)).toBe(DateTime.toEpochMillis(last.at))
      expect(preview.next_action).toBe(p.finalState === "canceled" ? "none" : "new_payment_method")
    }
  )
})
