/**
 * Dunning: what happens after a renewal charge fails. The policy is data — retry offsets from
 * the first failure and the state a subscription ends in when they are exhausted — set per
 * merchant (`dunning_retry_days`, `dunning_final_state`), defaulted by the engine's
 * {@link DefaultPolicy} (server config `RECUR_DUNNING_RETRY_DAYS` / `RECUR_DUNNING_FINAL_STATE`,
 * the facade's `dunning` option). {@link decide} is the whole rule; the `Dunning` service
 * (`Dunning.ts`) runs a scheduled retry.
 *
 * @since 0.1.0
 */
import { Context, Data, Layer } from "effect"
import type * as Merchant from "../tenants/Merchant.js"

const DAY = 86_400_000

/**
 * A dunning policy.
 *
 * @since 0.1.0
 */
export interface Policy {
  /** Retries, as offsets from the first failed renewal charge (ms), increasing. */
  readonly retryAfterMs: ReadonlyArray<number>
  /** Where the subscription goes when the last retry fails. */
  readonly finalState: "unpaid" | "canceled"
}

/**
 * The standard policy: retries 1, 3, 5 and 7 days after the first failure, then `unpaid`.
 *
 * @since 0.1.0
 */
export const standard: Policy = { retryAfterMs: [1 * DAY, 3 * DAY, 5 * DAY, 7 * DAY], finalState: "unpaid" }

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
  finalState: merchant.dunning_final_state
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
  input: { readonly retriesDone: number; readonly pastDue: boolean; readonly at: number }
): Step => {
  if (input.retriesDone >= policy.retryAfterMs.length) return Step.GiveUp({ finalState: policy.finalState })
  if (!input.pastDue) return Step.Retry({ at: input.at + policy.retryAfterMs[0]!, first: true })
  const firstFailure = input.at - (policy.retryAfterMs[input.retriesDone - 1] ?? 0)
  return Step.Retry({ at: firstFailure + policy.retryAfterMs[input.retriesDone]!, first: false })
}
