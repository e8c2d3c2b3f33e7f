/**
 * Dunning: what happens after a renewal charge fails. The policy is data — retry offsets from
 * the first failure, what each class of decline does (`retry` on the schedule or `stop` and ask
 * for a new payment method) and the state a subscription ends in when retries end — set per
 * merchant (`dunning_retry_days`, `dunning_on_decline`, `dunning_final_state`), defaulted by the
 * engine's {@link DefaultPolicy} (server config `RECUR_DUNNING_RETRY_DAYS` /
 * `RECUR_DUNNING_ON_DECLINE` / `RECUR_DUNNING_FINAL_STATE`, the facade's `dunning` option).
 * {@link decide} is the whole rule and {@link timeline} its preview; the `Dunning` service
 * (`Dunning.ts`) runs a scheduled retry.
 *
 * @since 0.1.0
 */
import { Context, Data, DateTime, Layer, Schema } from "effect"
import { Timestamp } from "../kernel/Common.js"
import type * as Merchant from "../tenants/Merchant.js"

const DAY = 86_400_000

/**
 * What kind of decline a declined charge is, as the payment gateway classes it (each adapter
 * maps its processor's codes; the table is in docs/payments.md): `hard` — the card can never pay
 * (stolen, lost, fraudulent, closed account, do not honor…); `expired_card` — the card's expiry
 * has passed; `soft` — it may pay later (insufficient funds, a processing error, the issuer
 * unavailable, a generic decline). A gateway that names none is `soft` (retried, as before).
 *
 * @since 0.1.0
 */
export const DeclineClass = Schema.Literals(["hard", "soft", "expired_card"])
/** @since 0.1.0 */
export type DeclineClass = typeof DeclineClass.Type

/**
 * What a class of decline does to dunning: `retry` on the schedule, or `stop` — no more retries,
 * the invoice waits for a new payment method (see docs/decisions.md).
 *
 * @since 0.1.0
 */
export const DeclineAction = Schema.Literals(["retry", "stop"])
/** @since 0.1.0 */
export type DeclineAction = typeof DeclineAction.Type

/**
 * What each class of decline does.
 *
 * @since 0.1.0
 */
export const DeclineRules = Schema.Struct({
  hard: DeclineAction,
  soft: DeclineAction,
  expired_card: DeclineAction
})
/** @since 0.1.0 */
export type DeclineRules = typeof DeclineRules.Type

/**
 * Some classes' actions, as a change gives them (the others keep the policy in force).
 *
 * @since 0.1.0
 */
export type DeclineRulesPatch = { readonly [K in keyof DeclineRules]?: DeclineAction | undefined }

/**
 * The standard rules: a hard decline and an expired card stop retrying, a soft decline retries.
 *
 * @since 0.1.0
 */
export const standardRules: DeclineRules = { hard: "stop", soft: "retry", expired_card: "stop" }

/**
 * The class of a declined charge: the gateway's, else `soft` (a gateway that does not class its
 * declines keeps the schedule, as dunning did before classes).
 *
 * @since 0.1.0
 */
export const classOf = (declineClass: DeclineClass | undefined): DeclineClass => declineClass ?? "soft"

/**
 * A dunning policy.
 *
 * @since 0.1.0
 */
export interface Policy {
  /** Retries, as offsets from the first failed renewal charge (ms), increasing. */
  readonly retryAfterMs: ReadonlyArray<number>
  /** Where the subscription goes when retries end (the last one failed, or a decline stopped them). */
  readonly finalState: "unpaid" | "canceled"
  /** What each class of decline does (absent: {@link standardRules}). */
  readonly onDecline?: DeclineRules | undefined
}

/**
 * The standard policy: retries 1, 3, 5 and 7 days after the first failure, then `unpaid`; hard
 * declines and expired cards stop at once.
 *
 * @since 0.1.0
 */
export const standard: Policy = {
  retryAfterMs: [1 * DAY, 3 * DAY, 5 * DAY, 7 * DAY],
  finalState: "unpaid",
  onDecline: standardRules
}

/**
 * The engine's default policy, for merchants that did not set their own schedule (and the
 * final state a new merchant starts with).
 *
 * @since 0.1.0
 */
export const DefaultPolicy: Context.Reference<Policy> = Context.Reference<Policy>("@recur/core/Dunning/DefaultPolicy", {
  defaultValue: () => standard
})

/**
 * A default policy as a layer.
 *
 * @since 0.1.0
 */
export const layerDefault = (policy: Policy) => Layer.succeed(DefaultPolicy, policy)

/**
 * Checks retry days: 1 to 10 whole days from 1 to 60, strictly increasing.
 *
 * @since 0.1.0
 */
export const validRetryDays = (days: ReadonlyArray<number>): boolean =>
  days.length >= 1 &&
  days.length <= 10 &&
  days.every((d, i) => Number.isInteger(d) && d >= 1 && d <= 60 && (i === 0 || d > days[i - 1]!))

/**
 * The policy in force for a merchant.
 *
 * @since 0.1.0
 */
export const policyOf = (merchant: Merchant.Merchant, fallback: Policy): Policy => ({
  retryAfterMs:
    merchant.dunning_retry_days !== null ? merchant.dunning_retry_days.map((d) => d * DAY) : fallback.retryAfterMs,
  finalState: merchant.dunning_final_state,
  onDecline: merchant.dunning_on_decline ?? fallback.onDecline ?? standardRules
})

/**
 * The next step after a failed renewal charge.
 *
 * @since 0.1.0
 */
export type Step = Data.TaggedEnum<{
  /** Retry at `at`; `first` when this failure starts dunning (the subscription becomes past due). */
  Retry: { readonly at: number; readonly first: boolean }
  /** No retry remains: the subscription ends in `finalState`, the invoice fails. */
  GiveUp: { readonly finalState: "unpaid" | "canceled" }
  /**
   * The decline's class stops retrying: the subscription ends in `finalState` at once (past due
   * first when this failure starts dunning), the invoice fails and waits for a new payment method.
   */
  Stop: { readonly finalState: "unpaid" | "canceled"; readonly declineClass: DeclineClass }
}>

/**
 * Constructors of {@link Step}.
 *
 * @since 0.1.0
 */
export const Step = Data.taggedEnum<Step>()

/**
 * The rule: `retriesDone` retries have run, the charge failed at `at`. Offsets are measured
 * from the first failure, so a late retry does not push the later ones back.
 *
 * @since 0.1.0
 */
export const decide = (
  policy: Policy,
  input: {
    readonly retriesDone: number
    readonly pastDue: boolean
    readonly at: number
    /** The decline's class (absent: `soft`). */
    readonly declineClass?: DeclineClass | undefined
  }
): Step => {
  const declineClass = classOf(input.declineClass)
  if ((policy.onDecline ?? standardRules)[declineClass] === "stop")
    return Step.Stop({ finalState: policy.finalState, declineClass })
  if (input.retriesDone >= policy.retryAfterMs.length) return Step.GiveUp({ finalState: policy.finalState })
  if (!input.pastDue) return Step.Retry({ at: input.at + policy.retryAfterMs[0]!, first: true })
  const firstFailure = input.at - (policy.retryAfterMs[input.retriesDone - 1] ?? 0)
  return Step.Retry({ at: firstFailure + policy.retryAfterMs[input.retriesDone]!, first: false })
}

/**
 * One step of a previewed timeline: the first failed charge (`failed`), a retry (`retry`, its
 * number from 1), or the end (`stop`: the decline's class stopped retrying; `exhausted`: the last
 * retry failed), each at its instant (Unix ms).
 *
 * @since 0.1.0
 */
export interface TimelineStep {
  readonly kind: "failed" | "retry" | "stop" | "exhausted"
  readonly at: number
  readonly attempt: number
}

/**
 * The timeline of a renewal whose charge fails at `failedAt` and keeps failing with a decline of
 * `declineClass` under `policy`, computed by {@link decide} itself: each retry's instant, then the
 * end and the state the subscription ends in (`finalState`).
 *
 * @example
 * timeline(standard, "soft", 0).steps.map((s) => s.kind) // ["failed", "retry", "retry", "retry", "retry", "exhausted"]
 * timeline(standard, "hard", 0).steps.map((s) => s.kind) // ["failed", "stop"]
 * @since 0.1.0
 */
export const timeline = (
  policy: Policy,
  declineClass: DeclineClass,
  failedAt: number
): { readonly steps: ReadonlyArray<TimelineStep>; readonly finalState: "unpaid" | "canceled" } => {
  const steps: Array<TimelineStep> = [{ kind: "failed", at: failedAt, attempt: 0 }]
  let at = failedAt
  let retriesDone = 0
  // every step moves forward: at most one retry per offset, then an end
  for (;;) {
    const step = decide(policy, { retriesDone, pastDue: retriesDone > 0, at, declineClass })
    if (step._tag === "Stop") {
      steps.push({ kind: "stop", at, attempt: retriesDone })
      return { steps, finalState: step.finalState }
    }
    if (step._tag === "GiveUp") {
      steps.push({ kind: "exhausted", at, attempt: retriesDone })
      return { steps, finalState: step.finalState }
    }
    retriesDone += 1
    at = step.at
    steps.push({ kind: "retry", at, attempt: retriesDone })
  }
}

/**
 * One step of a {@link Preview}: what happens at `at` (`failed`: the renewal's charge is declined;
 * `retry`: retry number `attempt`, declined again; `stop`: the decline's class stops retrying;
 * `exhausted`: no retry remains) and the subscription's and the invoice's status after it.
 *
 * @since 0.1.0
 */
export class PreviewStep extends Schema.Class<PreviewStep>("DunningPreviewStep")({
  kind: Schema.Literals(["failed", "retry", "stop", "exhausted"]),
  at: Timestamp,
  attempt: Schema.Int,
  subscription_status: Schema.Literals(["past_due", "unpaid", "canceled"]),
  invoice_status: Schema.Literals(["retrying", "failed"])
}) {}

/**
 * The timeline of a failed renewal under a dunning policy, every charge declined with
 * `decline_class`, from `failed_at` (the merchant's clock by default: a sandbox merchant's frozen
 * clock): the policy it was computed with, what the class does, each step, and how it ends —
 * the subscription's final status and what the invoice then waits for (`new_payment_method`, or
 * `none` once the subscription is canceled). A retry that succeeds ends it earlier, `active`.
 *
 * @since 0.1.0
 */
export class Preview extends Schema.Class<Preview>("DunningPreview")({
  decline_class: DeclineClass,
  action: DeclineAction,
  dunning_retry_days: Schema.Array(Schema.Int),
  dunning_final_state: Schema.Literals(["unpaid", "canceled"]),
  dunning_on_decline: DeclineRules,
  failed_at: Timestamp,
  steps: Schema.Array(PreviewStep),
  ends_at: Timestamp,
  final_status: Schema.Literals(["unpaid", "canceled"]),
  next_action: Schema.Literals(["new_payment_method", "none"])
}) {}

/**
 * The preview of `policy` for a decline of `declineClass` at `failedAt` (see {@link Preview}).
 *
 * @example
 * preview(standard, "hard", Date.parse("2026-01-01T00:00:00Z")).final_status // "unpaid", at once
 * @since 0.1.0
 */
export const preview = (policy: Policy, declineClass: DeclineClass, failedAt: number): Preview => {
  const { finalState, steps } = timeline(policy, declineClass, failedAt)
  const rules = policy.onDecline ?? standardRules
  const end = steps[steps.length - 1]!
  return new Preview({
    decline_class: declineClass,
    action: rules[declineClass],
    dunning_retry_days: policy.retryAfterMs.map((ms) => Math.round(ms / DAY)),
    dunning_final_state: policy.finalState,
    dunning_on_decline: rules,
    failed_at: DateTime.makeUnsafe(failedAt),
    steps: steps.map((step) => {
      const last = step.kind === "stop" || step.kind === "exhausted"
      return new PreviewStep({
        kind: step.kind,
        at: DateTime.makeUnsafe(step.at),
        attempt: step.attempt,
        subscription_status: last ? finalState : "past_due",
        // a class that stops never schedules a retry: its invoice fails with the decline
        invoice_status: last || rules[declineClass] === "stop" ? "failed" : "retrying"
      })
    }),
    ends_at: DateTime.makeUnsafe(end.at),
    final_status: finalState,
    next_action: finalState === "canceled" ? "none" : "new_payment_method"
  })
}
