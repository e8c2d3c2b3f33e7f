/**
 * The engine's metrics, as Effect `Metric`s in the registry of the running program: renewals
 * billed and failed, dunning retries by outcome, webhook attempts by outcome and their lag behind
 * the event. Core only counts; a host reads them with whatever exporter it installs (the server
 * renders them for Prometheus at `/metrics`, see docs/operations.md). The worker's and the
 * dispatcher's log lines for the same moments carry the same numbers as annotations.
 *
 * @since 0.1.0
 */
import { Effect, Metric } from "effect"

const renewals = Metric.counter("recur_renewals_total", {
  description: "Renewal work items that billed (outcome=billed) or failed (outcome=failed)",
  incremental: true
})

/**
 * Counts renewals: `billed` of them went through, `failed` did not (they are retried later).
 *
 * @since 0.1.0
 */
export const countRenewals = (billed: number, failed: number): Effect.Effect<void> =>
  Effect.all(
    [
      billed > 0 ? Metric.update(Metric.withAttributes(renewals, { outcome: "billed" }), billed) : Effect.void,
      failed > 0 ? Metric.update(Metric.withAttributes(renewals, { outcome: "failed" }), failed) : Effect.void
    ],
    { discard: true }
  )

const dunning = Metric.counter("recur_dunning_retries_total", {
  description:
    "Dunning retries by outcome: the charge's status (succeeded, failed, requires_action, processing, unavailable), skipped (nothing to retry) or error",
  incremental: true
})

/**
 * Counts one dunning retry with its outcome.
 *
 * @since 0.1.0
 */
export const countDunning = (outcome: string): Effect.Effect<void> =>
  Metric.update(Metric.withAttributes(dunning, { outcome }), 1)

const webhookAttempts = Metric.counter("recur_webhook_attempts_total", {
  description: "Webhook delivery attempts by outcome (delivered, failed)",
  incremental: true
})

const webhookLag = Metric.histogram("recur_webhook_delivery_lag_seconds", {
  description: "Time from an event's creation to each attempt to deliver it (on the merchant's clock)",
  boundaries: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 21600, 86400]
})

const webhookDuration = Metric.histogram("recur_webhook_attempt_duration_seconds", {
  description: "How long a merchant endpoint took to answer a delivery attempt",
  boundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

/**
 * Counts one webhook attempt: whether the endpoint took it, how long it took, and how long after
 * the event it was made.
 *
 * @since 0.1.0
 */
export const countWebhookAttempt = (attempt: {
  readonly delivered: boolean
  readonly durationMs: number
  readonly lagMs: number
}): Effect.Effect<void> =>
  Effect.all(
    [
      Metric.update(Metric.withAttributes(webhookAttempts, { outcome: attempt.delivered ? "delivered" : "failed" }), 1),
      Metric.update(webhookDuration, attempt.durationMs / 1000),
      Metric.update(webhookLag, Math.max(0, attempt.lagMs) / 1000)
    ],
    { discard: true }
  )
