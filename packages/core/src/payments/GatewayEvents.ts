/**
 * The payment processor's events, in the engine's vocabulary (what `ProcessorEvents` follows):
 * a payment changed, a refund, a dispute, or something the engine does not follow; and whose
 * merchant an event is. Re-exported by `Ports`.
 */
import { Data } from "effect"
import type * as Money from "../money/Money.js"

/**
 * What a processor's webhook said, in the engine's vocabulary: a payment of a trade changed (the
 * engine asks the gateway for its state, as the worker's reconciliation does), a trade was
 * refunded, a trade's charge was disputed, or something the engine does not follow.
 *
 * @since 0.1.0
 */
export type ProcessorEvent = Data.TaggedEnum<{
  PaymentUpdated: {
    readonly event_id: string
    readonly trade_id: string
    /**
     * The event says the payment reached an outcome (succeeded, failed, canceled, waits for the
     * payer): when the engine still cannot read one, the event is a `Retry`.
     */
    readonly settled?: boolean | undefined
    /** See {@link merchantOfEvent}. */
    readonly merchant_id?: string | undefined
  }
  Refunded: {
    readonly event_id: string
    readonly trade_id: string
    /**
     * The charge's succeeded refunds made at the processor outside Recur (its dashboard): each is
     * recorded once as a Recur refund (by its processor id), never beyond what the trade holds.
     */
    readonly processor_refunds?: ReadonlyArray<ProcessorRefund> | undefined
    /**
     * The processor's ids of the refunded charge (Stripe: the charge and its PaymentIntent): when
     * neither is the transaction that paid the trade (an extra payment of it, refunded apart), its
     * refunds are not the trade's and none is recorded. Unset: the charge is the trade's.
     */
    readonly charge_ids?: ReadonlyArray<string> | undefined
    /** See {@link merchantOfEvent}. */
    readonly merchant_id?: string | undefined
  }
  /** A refund of ours (its id) changed at the processor: a pending one may have settled. */
  RefundUpdated: { readonly event_id: string; readonly refund_id: string }
  Disputed: {
    readonly event_id: string
    readonly trade_id: string
    readonly dispute_id: string
    readonly amount: Money.Money
    readonly reason: string
    /**
     * Where the dispute is: `open` (an inquiry or a chargeback waiting for evidence or the bank),
     * or how it ended: `won`, `lost`, `warning_closed` (an inquiry closed without a chargeback),
     * `prevented` (stopped before it became a chargeback).
     */
    readonly status: DisputeStatus
    /** The processor's own status (Stripe's `needs_response`, `warning_under_review`, …). */
    readonly processor_status?: string | undefined
    /** When the evidence is due (epoch milliseconds), while the processor gives one. */
    readonly evidence_due_by?: number | null | undefined
    /** See {@link merchantOfEvent}. */
    readonly merchant_id?: string | undefined
  }
  Ignored: { readonly event_id: string; readonly type: string }
  /**
   * The event is genuine but could not be read now (the processor did not answer while its
   * object was read): nothing is done or recorded, and the processor is asked to send the event
   * again.
   */
  Retry: { readonly event_id: string; readonly reason: string }
}>

/**
 * The merchant an event is acted on for: the URL's (`/webhooks/<provider>/<merchant_id>`), unless
 * the gateway serves several merchants on one processor account and read the event's merchant
 * from the object it is about (its `merchant_id`, which only such a gateway sets: a merchant's own
 * account could name another merchant).
 *
 * @since 0.1.0
 */
export const merchantOfEvent = (event: ProcessorEvent, urlMerchantId: string): string =>
  "merchant_id" in event && event.merchant_id !== undefined ? event.merchant_id : urlMerchantId

/**
 * A dispute's state as the engine follows it: open, or how it ended.
 *
 * @since 0.1.0
 */
export type DisputeStatus = "open" | "won" | "lost" | "warning_closed" | "prevented"

/**
 * A refund of a trade's charge the processor made outside Recur (a refund in its dashboard).
 *
 * @since 0.1.0
 */
export interface ProcessorRefund {
  /** The processor's id of the refund (`re_…`): the key it is recorded once by. */
  readonly refund_id: string
  readonly amount: Money.Money
  readonly reason?: string | null | undefined
}

/**
 * Constructors of {@link ProcessorEvent}.
 *
 * @since 0.1.0
 */
export const ProcessorEvent = Data.taggedEnum<ProcessorEvent>()
