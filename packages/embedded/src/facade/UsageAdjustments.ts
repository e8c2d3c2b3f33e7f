/**
 * The facade's `usageAdjustments` group (issue 35): voiding and amending meter events, previewing
 * the re-rating of a billed period, and the adjustments made — as
 * `POST /api/v1/meter_events/{transaction_id}/void|amend` and
 * `POST|GET /api/v1/subscription/{id}/usage_adjustments…`, with the REST handlers' decoding.
 *
 * @since 0.1.0
 */
import { UsageAdjustmentRequests } from "@recur/contract"
import { MeterCorrections, MeterEvents, UsageAdjustment, UsageAdjustments } from "@recur/core"
import { Effect } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, pageJson } from "./Kit.js"
import type { Answer, PageJson } from "./Types.js"

/** A usage adjustment as the REST API answers it. @since 0.1.0 */
export type UsageAdjustmentJson = Answer<typeof UsageAdjustment.UsageAdjustment>
/** What re-rating a period would do. @since 0.1.0 */
export type UsageAdjustmentPreviewJson = UsageAdjustment.AdjustmentPreview
/** An amendment: the replacement's `transaction_id`, its `timestamp` and `properties`. @since 0.1.0 */
export type AmendMeterEventInput = typeof UsageAdjustmentRequests.AmendMeterEvent.Encoded
/** The period to preview: any instant of it. @since 0.1.0 */
export type PreviewUsageAdjustmentInput = typeof UsageAdjustmentRequests.PreviewUsageAdjustment.Encoded

/**
 * The `usageAdjustments` group of the facade.
 *
 * @since 0.1.0
 */
export interface UsageAdjustmentsClient {
  /** `POST /api/v1/meter_events/{transaction_id}/void`: voids the event; a closed period it counted in is re-rated. */
  readonly voidEvent: (
    merchantId: string,
    transactionId: string
  ) => Promise<{ readonly event: MeterEvents.MeterEventView; readonly voided: boolean }>
  /** `POST /api/v1/meter_events/{transaction_id}/amend`: voids it and ingests its replacement, in one transaction. */
  readonly amendEvent: (
    merchantId: string,
    transactionId: string,
    input: AmendMeterEventInput
  ) => Promise<{
    readonly event: MeterEvents.MeterEventView
    readonly amended: MeterEvents.MeterEventView
    readonly duplicate: boolean
  }>
  /** `POST /api/v1/subscription/{subscription_id}/usage_adjustments/preview`: what re-rating the period would do. */
  readonly preview: (
    merchantId: string,
    subscriptionId: string,
    input: PreviewUsageAdjustmentInput
  ) => Promise<UsageAdjustmentPreviewJson>
  /** `POST /api/v1/usage_adjustments/{usage_adjustment_id}/apply`: issues a pending adjustment. */
  readonly apply: (merchantId: string, usageAdjustmentId: string) => Promise<UsageAdjustmentJson>
  /** `GET /api/v1/subscription/{subscription_id}/usage_adjustments`: newest first. */
  readonly list: (
    merchantId: string,
    subscriptionId: string,
    filter?: { readonly limit?: number; readonly starting_after?: string }
  ) => Promise<PageJson<UsageAdjustmentJson>>
}

/** `usageAdjustments`. @since 0.1.0 */
export const usageAdjustments = ({ run }: Kit<Services>): BillingClient["usageAdjustments"] => ({
  voidEvent: (merchantId, transactionId) =>
    run(
      id("transaction_id", transactionId).pipe(
        Effect.flatMap((tx) => MeterCorrections.MeterCorrections.use((s) => s.void(merchantId, tx))),
        Effect.map((done) => ({ event: MeterEvents.viewOf(done.event), voided: done.voided }))
      )
    ),
  amendEvent: (merchantId, transactionId, input) =>
    run(
      Effect.all([
        id("transaction_id", transactionId),
        Effect.flatMap(decode(UsageAdjustmentRequests.AmendMeterEvent, input), UsageAdjustmentRequests.amendmentOf)
      ]).pipe(
        Effect.flatMap(([tx, amendment]) =>
          MeterCorrections.MeterCorrections.use((s) => s.amend(merchantId, tx, amendment))
        ),
        Effect.map((done) => ({
          event: MeterEvents.viewOf(done.event),
          amended: MeterEvents.viewOf(done.amended),
          duplicate: done.duplicate
        }))
      )
    ),
  preview: (merchantId, subscriptionId, input) =>
    run(
      Effect.all([
        id("subscription_id", subscriptionId),
        Effect.flatMap(decode(UsageAdjustmentRequests.PreviewUsageAdjustment, input), UsageAdjustmentRequests.previewAt)
      ]).pipe(
        Effect.flatMap(([sub, at]) => UsageAdjustments.UsageAdjustments.use((s) => s.preview(merchantId, sub, at))),
        Effect.map(UsageAdjustments.previewOf)
      )
    ),
  apply: (merchantId, usageAdjustmentId) =>
    run(
      id("usage_adjustment_id", usageAdjustmentId).pipe(
        Effect.flatMap((a) => UsageAdjustments.UsageAdjustments.use((s) => s.apply(merchantId, a))),
        Effect.map(json(UsageAdjustment.UsageAdjustment))
      )
    ),
  list: (merchantId, subscriptionId, filter = {}) =>
    run(
      id("subscription_id", subscriptionId).pipe(
        Effect.flatMap((sub) =>
          UsageAdjustments.UsageAdjustments.use((s) =>
            s.list(merchantId, sub, { limit: filter.limit ?? 10, starting_after: filter.starting_after })
          )
        ),
        Effect.map(pageJson(UsageAdjustment.UsageAdjustment))
      )
    )
})
