import { BillingPeriod, Money, Proration } from "@recur/core"
import { expect, it } from "@effect/vitest"
import { Clock, Effect, Result, Option } from "effect"
import { TestClock } from "effect/testing"

// A customer on $10/month, billed from Jan 1, upgrades to $20/month on Jan 16.
it.effect("upgrading half-way through January charges the difference for the rest of it", () =>
  Effect.gen(function* () {
    const schedule = { anchor: Date.parse("2024-01-01T00:00:00Z"), unit: "month", count: 1 } as const
    yield* TestClock.setTime(schedule.anchor)
    yield* TestClock.adjust("15 days") // now: 2024-01-16T00:00:00Z

    const now = yield* Clock.currentTimeMillis
    const period = Option.getOrThrow(BillingPeriod.periodAt(schedule, now))
    const change = Result.getOrThrow(
      Proration.prorate({
        policy: Proration.Policy.PerSecond(),
        period,
        at: now,
        paid: Money.make(1000n, "USD"),
        newAmount: Money.make(2000n, "USD"),
        creditMode: "refund"
      })
    )

    expect(Money.format(change.credit)).toBe("5.16") // 16/31 of $10, half-even
    expect(Money.format(change.charge)).toBe("10.32") // 16/31 of $20
    expect(change.outcome).toEqual(Proration.Outcome.Upgrade({ amount: Money.make(516n, "USD") }))
  })
)
