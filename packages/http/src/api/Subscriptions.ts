/**
 * The subscriptions group (reads, changes, lifecycle and usage): its endpoints' paths, bodies and answers.
 *
 * @since 0.1.0
 */
import { Invoice, type PriceChanges, Subscription, Usage } from "@recur/core"
import { CollectionRequests, CurrentUsage, RequestBodies } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Envelope, Page, QueryList, PageQuery, Authentication } from "./Shared.js"

const SubscriptionPath = Schema.Struct({ subscription_id: Schema.String })
const StatusResult = Envelope(Schema.Struct({ subscription_id: Schema.String, status: Schema.String }))
/**
 * What a committed change does (`PriceChanges.Quote["outcome"]`): an enum in the OpenAPI
 * document, so generated clients get the literal outcomes rather than a string.
 */
const QuoteOutcome = Schema.Literals([
  "upgrade",
  "refund",
  "credit_balance",
  "none",
  "scheduled",
  "quantity_next_cycle",
  "pending_prorations",
  "interval_switch"
]).annotate({
  description:
    "`upgrade` (charged now), `refund`, `credit_balance`, `none`, `scheduled` (at the period's end), `quantity_next_cycle` (a quantity change by the seed's `quantity` field: never prorated, the new quantity from the next cycle), `pending_prorations` (billed by the next cycle's invoice) or `interval_switch` (the new period invoiced now). Every value explained: docs/proration.md, \"A quote's outcome\"."
})
// the enum is exactly the engine's outcomes, no more and no fewer
type SameOutcomes = [PriceChanges.Quote["outcome"]] extends [typeof QuoteOutcome.Type]
  ? [typeof QuoteOutcome.Type] extends [PriceChanges.Quote["outcome"]]
    ? true
    : false
  : false
const sameOutcomes: SameOutcomes = true
void sameOutcomes

/**
 * What a change will bill, exactly (the answer of a preview, and of an item change's commit).
 *
 * @since 0.1.0
 */
export const Quote = Schema.Struct({
  quote_id: Schema.String,
  subscription_id: Schema.String,
  effective_type: Schema.String,
  proration: Schema.String,
  currency: Schema.String,
  credit: Schema.String,
  charge: Schema.String,
  net: Schema.String,
  tax: Schema.String,
  total: Schema.String,
  outcome: QuoteOutcome,
  lines: Schema.Array(Schema.Struct({ description: Schema.String, amount: Schema.String })),
  effective_at: Schema.String,
  /** When the next cycle's invoice bills the lines (`outcome` `pending_prorations`, `proration=create_prorations`). */
  billed_at: Schema.optional(Schema.String),
  /** The subscription's discounts that stop applying from the change on (outside the new price's products). */
  discounts_ending: Schema.Array(Schema.Struct({ discount_id: Schema.String, discount_code: Schema.String })),
  /**
   * An item change deleting the metered item now, or moving it to another price now: its usage so
   * far, kept for the next renewal invoice (a `usage` line there); absent when the change keeps none.
   */
  kept_usage: Schema.optional(
    Schema.Array(Schema.Struct({ description: Schema.String, amount: Schema.String })).annotate({
      description:
        "The metered item's usage so far that this item change (deleting it, or moving it to another price, now) keeps for the next renewal invoice, rated at the price in force until the change; absent when it keeps none."
    })
  )
})

/**
 * Subscriptions: reads, changes, lifecycle and usage.
 *
 * @since 0.1.0
 */
export class SubscriptionsGroup extends HttpApiGroup.make("subscriptions")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/subscription", {
      query: Schema.Struct({
        ...PageQuery,
        subscription_ids: QueryList,
        status: QueryList,
        merchant_id: Schema.optional(Schema.String),
        order_ids: QueryList,
        source_trade_id: QueryList,
        billing_cycle_unit: Schema.optional(Schema.String),
        search_type: Schema.optional(Schema.String),
        search_value: Schema.optional(Schema.String)
      }),
      success: Envelope(Page(Subscription.Subscription)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/subscription/:subscription_id", {
      params: SubscriptionPath,
      success: Envelope(Schema.Struct({ subscription: Subscription.Subscription })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("change", "/api/v1/subscription/:subscription_id", {
      params: SubscriptionPath,
      payload: RequestBodies.ChangePrice,
      success: Envelope(Schema.Struct({})),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("previewChange", "/api/v1/subscription/:subscription_id/preview-change", {
      params: SubscriptionPath,
      payload: RequestBodies.ChangePrice,
      success: Envelope(Quote),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("upcomingInvoice", "/api/v1/subscription/:subscription_id/upcoming_invoice", {
      params: SubscriptionPath,
      success: Envelope(Schema.Struct({ upcoming_invoice: Schema.NullOr(Invoice.UpcomingInvoice) })),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("currentUsage", "/api/v1/subscription/:subscription_id/current_usage", {
      params: SubscriptionPath,
      success: Envelope(Schema.Struct({ current_usage: CurrentUsage.CurrentUsage })),
      error: ApiErrors.all
    }).annotate(
      OpenApi.Description,
      "The current period's usage of each item billed by a billable metric: its metric, group, aggregated value and what it would bill, and the total (before discounts and tax) — the computation the next renewal makes."
    )
  )
  .add(
    HttpApiEndpoint.post("revokePriceChange", "/api/v1/subscription/:subscription_id/revoke-price-change", {
      params: SubscriptionPath,
      success: Envelope(
        Schema.Struct({ subscription_id: Schema.String, result: Schema.Literals(["revoked", "no_pending_change"]) })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("cancel", "/api/v1/subscription/:subscription_id/cancel", {
      params: SubscriptionPath,
      payload: RequestBodies.Cancel,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("revokeCancel", "/api/v1/subscription/:subscription_id/revoke-cancel", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("pause", "/api/v1/subscription/:subscription_id/pause", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("setCollection", "/api/v1/subscription/:subscription_id/collection_method", {
      params: SubscriptionPath,
      payload: CollectionRequests.SetCollection,
      success: Envelope(CollectionRequests.CollectionAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("resume", "/api/v1/subscription/:subscription_id/resume", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("updatePaymentMethod", "/api/v1/subscription/:subscription_id/payment_method", {
      params: SubscriptionPath,
      payload: RequestBodies.PaymentMethod,
      success: Envelope(
        Schema.Struct({
          subscription_id: Schema.String,
          status: Schema.String,
          payment_method: Schema.Struct({
            brand: Schema.String,
            last4: Schema.String,
            exp_month: Schema.Int,
            exp_year: Schema.Int
          }),
          retry: Schema.NullOr(Schema.Struct({ trade_id: Schema.String, trade_status: Schema.String }))
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("renewal", "/api/v1/subscription/:subscription_id/renewal", {
      params: SubscriptionPath,
      success: StatusResult,
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("usage", "/api/v1/subscription/:subscription_id/usage", {
      params: SubscriptionPath,
      query: Schema.Struct({
        merchant_id: Schema.optional(Schema.String),
        cycle_index: Schema.optional(Schema.String)
      }),
      success: Envelope(Usage.UsageSummary),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("recordUsage", "/api/v1/subscription/:subscription_id/usage", {
      params: SubscriptionPath,
      payload: RequestBodies.Usage,
      success: Envelope(
        Schema.Struct({
          subscription_id: Schema.String,
          cycle_index: Schema.Int,
          usage_count: Schema.Int,
          duplicate: Schema.Boolean
        })
      ),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("recordUsageBatch", "/api/v1/usage/batch", {
      payload: RequestBodies.UsageBatch,
      success: Envelope(
        Schema.Struct({
          accepted: Schema.Int,
          duplicates: Schema.Int,
          records: Schema.Array(
            Schema.Struct({
              subscription_id: Schema.String,
              event_id: Schema.String,
              cycle_index: Schema.Int,
              usage_count: Schema.Int,
              duplicate: Schema.Boolean
            })
          )
        })
      ),
      error: ApiErrors.all
    }).annotate(
      OpenApi.Description,
      "Records up to 1,000 usage events of any of the merchant's usage-billed subscriptions in one transaction. Re-sent event_ids are reported as duplicates and not counted again; a bad record rejects the whole batch (the error names records[i])."
    )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Subscriptions") {}
