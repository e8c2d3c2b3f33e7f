import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { readFileSync } from "node:fs"
import { Lifecycle } from "../../src/index.js"

describe("Lifecycle", () => {
  it("moves a subscription through the contract's table with its events", () => {
    const steps: Array<
      [Lifecycle.SubscriptionStatus, Lifecycle.SubscriptionTrigger, Lifecycle.SubscriptionStatus, ReadonlyArray<string>]
    > = [
      ["init", "first_payment_succeeded_with_trial", "trial", ["v2.subscription.first"]],
      ["trial", "trial_expiring_notice", "trial", ["v2.subscription.trial_period_expiring"]],
      ["trial", "renewal_succeeded", "active", []],
      ["active", "renewal_failed", "past_due", ["v2.subscription.past_due"]],
      ["past_due", "retry_succeeded", "active", []],
      ["active", "pause", "paused", ["v2.subscription.paused"]],
      ["paused", "resume", "active", ["v2.subscription.resumed"]],
      ["active", "request_cancel_at_period_end", "active", ["v2.subscription.cancellation_requested"]],
      ["active", "cancel", "canceled", ["v2.subscription.canceled"]]
    ]
    for (const [from, trigger, to, events] of steps) {
      expect(Result.getOrThrow(Lifecycle.transition(Lifecycle.subscription, from, trigger))).toEqual({ to, events })
    }
  })

  it("refuses a transition the table does not allow, with a typed error", () => {
    const e = Lifecycle.transition(Lifecycle.subscription, "canceled", "resume")
    expect(Result.isFailure(e) && e.failure).toMatchObject({
      _tag: "InvalidTransition",
      machine: "Subscription",
      from: "canceled",
      trigger: "resume"
    })
    expect(Result.isFailure(Lifecycle.transition(Lifecycle.invoice, "failed", "paid"))).toBe(true)
    expect(Result.isFailure(Lifecycle.transition(Lifecycle.priceVersion, "draft", "freeze"))).toBe(true)
    expect(Result.isFailure(Lifecycle.transition(Lifecycle.tradeRefund, "refunded", "partial_refund"))).toBe(true)
  })

  it("canceled is terminal: nothing leaves it", () => {
    for (const m of Lifecycle.machines) {
      for (const terminal of m.terminal) {
        const leaving = m.transitions.filter(
          (t) => t.from.includes(terminal) && t.to !== undefined && t.to !== terminal
        )
        if (m.name !== "WebhookDelivery") expect(leaving).toEqual([])
      }
    }
    expect(Lifecycle.triggersFrom(Lifecycle.subscription, "canceled")).toEqual([])
  })

  it("every machine is well-formed: known states, reachable from the initial state", () => {
    for (const m of Lifecycle.machines) {
      const reached = new Set<string>([m.initial])
      let grew = true
      while (grew) {
        grew = false
        for (const t of m.transitions) {
          for (const s of t.from) expect(m.states).toContain(s)
          if (t.to) expect(m.states).toContain(t.to)
          if (t.from.some((s) => reached.has(s)) && t.to && !reached.has(t.to)) {
            reached.add(t.to)
            grew = true
          }
        }
      }
      expect([...reached].sort()).toEqual([...m.states].sort())
    }
  })

  it("every event type of the contract is emitted by some transition, except those owned by creation and those derived from transitions", () => {
    const emitted = new Set([
      ...Lifecycle.machines.flatMap((m) => [...m.createEvents, ...m.transitions.flatMap((t) => t.events)]),
      ...Lifecycle.derivedEvents
    ])
    expect([...emitted].sort()).toEqual([...Lifecycle.EventType.literals].sort())
  })

  it("docs/states.md is generated from these tables", () => {
    const doc = readFileSync(new URL("../../../../docs/states.md", import.meta.url), "utf8")
    expect(doc).toBe(Lifecycle.toMarkdown())
  })
})
