/**
 * What the OpenAPI document says beyond the schemas the server decodes with: the request bodies'
 * schemas are deliberately loose (every field optional, so the engine answers a missing or
 * malformed field with `InvalidParameter` naming it, in the contract's words), so the document
 * adds what a reader and a generated client need — which fields are required, which values are
 * allowed, that unknown fields are accepted, `limit` as an integer, a description of each
 * operation, and where the API is served.
 */
import { BillingPeriod, Discount, Invoice, Lifecycle, Price } from "@recur/core"

type Json = Record<string, any>

/** One sentence per operation, by `operationId`. */
const descriptions: Record<string, string> = {
  "customers.create":
    "Creates a customer; `email` or `payer_id` is required (one payer id per customer). `collection_method` (`charge_automatically` or `send_invoice`) and `days_until_due` (1 to 365, required with `send_invoice`) set how its invoices are collected.",
  "customers.update": "Updates a customer found by `customer_id` or `payer_id`; omitted fields are kept.",
  "customers.delete":
    "Deletes a customer found by `customer_id` or `payer_id`. A customer with a subscription that is not canceled is refused (409 `state_conflict`, naming it): cancel it first.",
  "customers.get": "One customer.",
  "customers.list": "The merchant's customers, newest first, with cursor pagination and filters.",
  "customerBalances.balance":
    "The customer's balance in each currency it has one in (`amount` signed: positive is credit the customer holds, negative is owed), the sum of its ledger entries.",
  "customerBalances.transactions":
    "The customer's balance ledger, newest first, with cursor pagination: each entry's signed `amount`, `ending_balance`, `source_type` (`proration_credit`, `carried_minimum`, `applied_to_invoice`, `manual_adjustment`, `credit_note`, `refund_leftover`, `credit_grant`, `credit_grant_expired`, `credit_grant_voided`, `top_up`) and `source_id`.",
  "customerBalances.creditNote":
    "Issues a credit note of an invoice: a numbered document of the credit-note series (`INV-CN-…`, a `refund` invoice against it) for the decimal `amount` with the invoice's taxes in proportion, and `v2.credit_note.created`. `method` says what it does: `credit_balance` (the default) credits the customer's balance from a paid subscription or one-off invoice, no money moving — never more than the invoice still holds after its refunds and credits (400 on `amount`); `reduce_invoice` lowers what an issued unpaid invoice (`open`, `retrying`, `failed`, `uncollectible`) still owes — its amount as issued stays, `amount_remaining` and its trade's amount to collect go down, and reduced to zero it is settled (`v2.invoice.paid`, nothing charged); never more than remains (400); `refund` refunds the invoice's payment to the card through `POST /api/v1/refund`'s path, keyed by the `Request-Id`, and answers its `refund_status` and its credit note (absent while the processor has not confirmed the refund, or when it refused it). A state the method does not apply to is 409 (a paid invoice to reduce, an unpaid one to credit or refund, a charge in flight).",
  "customerBalances.adjust":
    "Adjusts the customer's balance by hand: a signed decimal `amount` (positive credits the customer, negative debits; not 0, within the amount bounds), its `currency` and a `reason` (1 to 500 characters). Held as the share of the customer's subscription in that currency that renews next, so its next invoice applies it before charging; a customer without one keeps it on its ledger. Answers the ledger entry; a `v2.customer.balance_updated` event follows.",
  "creditGrants.create":
    "Grants prepaid credit to the customer (no money moves): `amount` (positive decimal), `currency`, `reason` (1 to 500 characters), `category` (`paid` or `promotional`), and optionally `expires_at` (RFC 3339, in the future). The credit is on the customer's balance at once (a `credit_grant` ledger entry) and held by no subscription: the customer's next invoices in that currency apply it before charging, earliest-expiring grant first. What remains at `expires_at` is removed (`credit_grant_expired`). Emits `v2.credit_grant.created`.",
  "creditGrants.list": "The customer's credit grants, newest first, with cursor pagination.",
  "creditGrants.get":
    "One credit grant (`cgr_…`): its `amount`, `remaining`, `expires_at` and `status` (`active`, `depleted`, `expired`, `voided`).",
  "creditGrants.void":
    "Voids an active credit grant: what remains leaves the customer's balance (a `credit_grant_voided` ledger entry), `v2.credit_grant.voided`. A grant no longer active is 409 `state_conflict`.",
  "creditGrants.topUp":
    "The customer buys prepaid credit: `amount` and `currency` are charged — to `card` or `payment_method` when given, else off session to the customer's card on file — and granted (`category: paid`, `source: top_up`, a `top_up` ledger entry) only once the charge succeeded. A declined charge grants nothing (400 `invalid_request`); a processor that did not answer grants nothing yet (503: retry with the same `Request-Id`, which keys the charge).",
  "creditGrants.autoTopUp":
    "Sets the customer's automatic top-up: `enabled`, `threshold`, `amount`, `currency`. When an invoice's credit leaves the customer's balance in that currency under `threshold`, `amount` is charged off session to its card on file (one top-up in flight per customer) and granted on success; a decline emits `v2.customer.auto_top_up_failed` and is tried again after 1, 3 and 5 days.",
  "catalog.categories": "The product categories a product may name in `category_id`.",
  "catalog.createProduct": "Creates a product (draft or active) to attach prices to.",
  "catalog.products": "The merchant's products, with cursor pagination and filters.",
  "catalog.productStatus": "Moves a product between draft, active and archived.",
  "catalog.createPrice":
    "Creates a price and its first version: flat, package or usage-based; one-time or recurring; with trials, intro phases and tiers. With `customer_id` the price is private to that customer: absent from lists not asked for that customer, and no such price (404) for any other customer's checkout or change.",
  "catalog.prices":
    "The merchant's public prices (their current versions), with cursor pagination and filters; with `customer_id`, that customer's catalog: the public prices and the customer's private ones.",
  "catalog.createPriceVersion":
    "A new version of the price, in the body of `POST /api/v1/prices` (its product is the price's; `merchant_price_id` and `customer_id` are the price's and cannot change). Created `active`, it becomes the price's current version: new checkouts sell it, existing subscriptions keep theirs until a migration moves them.",
  "catalog.createMigration":
    "Previews moving the subscriptions of `from_version_id` to `to_version_id` (both versions of the price; the target active and billing like the source) from their next cycle (`effective` `next_cycle`, the only value) — the item at that version, whether the subscription's base item or an add-on item: a `previewed` migration whose lines show each subscription's next invoice before and after (every item's line in it). Nothing else changes.",
  "catalog.migration": "One catalog migration: its status and its counts of lines pending, migrated and skipped.",
  "catalog.migrationLines":
    "A migration's lines, one per subscription, newest first, optionally of one `outcome` (`pending`, `migrated`, `skipped`): the item moved (`item_id`), the next invoice's subtotal and amount before and after, and why a line was skipped.",
  "catalog.runMigration":
    "Runs a previewed migration: the worker moves each pending line's subscription once (the new version from its next cycle, a `v2.subscription.migrated` event), skips one written since the preview (`changed_since_preview`), and completes the migration. 409 unless previewed.",
  "catalog.cancelMigration": "Cancels a migration that has not run. 409 once it runs.",
  "schedules.create":
    "Attaches a schedule to an active subscription (of one item or several): 1 to 10 `phases`, each of 1 to 20 `items` (`price_id`, `quantity`; the first is the base item, the others the subscription's other items for the phase's cycles) on the subscription's currency, dimension and interval, each price once, an optional `discount_code`, and `cycles` or an `end_date` on a period boundary; `start` `current_period` (default: the first phase repeats the subscription's current items) or `next_period`; `end_behavior` `release` (default) or `cancel`. Each renewal that opens a phase bills all its items; a refusal names the item (`phases[i].items[j].price_id`). 409 while another schedule governs, a change or cancel waits for the period's end, or on a fixed term.",
  "schedules.get":
    "The subscription's schedule: its status, current phase and phases with their cycles and dates; 404 when it never had one.",
  "schedules.release":
    "Releases the schedule: the subscription keeps its current phase's items (prices and quantities), and no later phase starts.",
  "items.list":
    "The subscription's items (1 to 20), the base item first: each price with its quantity, as the subscription's `items` shows them.",
  "items.preview":
    "The quote of an item change, with Stripe's `items` semantics: an entry with `id` changes that item's `quantity` and/or `price_id`, or deletes it (`deleted: true`; not the base item — change its price instead); an entry without `id` adds an item (`price_id`, `quantity` 1 by default); items not named stay. `proration`: `always_invoice` (default; credit the unused part of what was paid, charge the rest of the period now), `create_prorations` (the lines wait for the next invoice), `none`, or `next_cycle` (the new items from the next renewal). Nothing changes; commit with its `quote_id` within 15 minutes.",
  "items.commit":
    "Commits an item change (the body of the preview). With `quote_id` it bills exactly what the quote showed, or is refused (409) when anything moved since; an upgrade is invoiced and charged now, a downgrade refunded or credited per the merchant's `proration_credit`. Answers the quote and the items after; a `v2.subscription.items_updated` event follows. 409 while a schedule governs the subscription.",
  "schedules.cancel": "Cancels the schedule and the subscription at the end of its current period.",
  "catalog.priceStatus": "Activates or archives a price version.",
  "catalog.priceVersion": "One price version.",
  "catalog.priceVersions": "Every version of a price, newest first.",
  "checkout.create":
    "Creates a checkout session and its hosted page (`session_url`); the payer pays there, or your page posts the card to `/checkout/{session_id}/pay`.",
  "checkout.get": "One checkout session and its status.",
  "subscriptions.list":
    "The merchant's subscriptions, with cursor pagination and filters (`status`, `customer_id`, …).",
  "subscriptions.get": "One subscription: status, current period, price and quantity.",
  "subscriptions.change":
    "Changes a subscription's price or quantity, at once (prorated: charged or credited now) or at the period's end; pass a preview's `quote_id` to commit exactly what was shown.",
  "subscriptions.previewChange": "The proration a change would charge or credit, without changing anything (a quote).",
  "subscriptions.revokePriceChange": "Withdraws a change scheduled for the period's end.",
  "subscriptions.cancel": "Cancels at once (prorated refund per the merchant's policy) or at the period's end.",
  "subscriptions.revokeCancel": "Withdraws a cancellation scheduled for the period's end.",
  "subscriptions.pause": "Pauses an active subscription: no renewals until it is resumed.",
  "subscriptions.resume": "Resumes a paused subscription.",
  "subscriptions.setCollection":
    "Sets how the subscription's next invoices are collected: `charge_automatically` (the card on file), `send_invoice` with `days_until_due` (1 to 365, required: the invoice is issued open, emailed with its hosted page where the customer pays by card, and enters dunning when past due), or `null` to follow the customer's setting. An invoice already issued keeps its own. Refused (400 naming the field) when the terms are missing or out of range; 409 for a canceled subscription.",
  "subscriptions.renewal": "Bills the subscription's due cycle now (sandbox merchants), as the worker would.",
  "subscriptions.usage": "The usage recorded in one cycle of a metered subscription (the open cycle by default).",
  "subscriptions.recordUsage": "Records one usage event in the open cycle; a repeated `event_id` is counted once.",
  "subscriptions.recordUsageBatch": "Records up to 1,000 usage events of any subscriptions in one transaction.",
  "payments.trades": "Charges and refunds (trades), with cursor pagination and filters.",
  "payments.trade": "One trade.",
  "payments.invoices": "Invoices, newest first, with cursor pagination and filters.",
  "payments.invoice":
    "One invoice, with its Stripe-style `status` (`draft`, `open`, `paid`, `void`, `uncollectible`; a credit note `issued`) derived from `biz_status` (docs/invoices.md).",
  "payments.finalizeInvoice":
    "Finalises a draft invoice (a renewal's, during the merchant's `invoice_draft_grace_seconds`) before the worker does at the end of the grace period: it takes its number from the merchant's gapless series, then is charged to the card on file (or settled when nothing is owed), as a renewal is (`v2.invoice.finalized`) — or, when its subscription's collection in force is `send_invoice`, sent as a sent renewal is: `open`, due `days_until_due` from now, `v2.invoice.sent` and an email, not charged. A finalisation racing another (the worker's, or a second request) makes one number and one charge; the loser answers 409. A non-draft is refused with 409 `state_conflict`, nothing changed.",
  "payments.editInvoice":
    "Edits a draft invoice (a renewal's, during the merchant's grace period): `add_lines` (up to 20 one-off lines: `description` 1–200 characters, `amount` the unit price as a decimal string in the invoice's currency, `quantity` 1–10000, default 1; the line's amount is amount × quantity), `remove_lines` (positions among the draft's `lines` of its subscription, one-off, usage or trial lines) and `discount_id` (an active discount of the merchant, not already applied). The discounts, tax, credit and each line's shares are recomputed by the code that builds invoices; credit no longer used returns to the subscription's balance. Checked whole first: a bad field is 400 naming it, an issued invoice 409 `state_conflict` — nothing changes.",
  "payments.voidInvoice":
    "Voids a draft (the invoice items it billed are pending again), or an issued unpaid invoice (`open`, `retrying`, `failed`, `uncollectible`): nothing is owed; an issued one keeps its number, and its page and PDF say VOID (`v2.invoice.voided`). Its dunning retries (or a sent invoice's past-due reminders) stop and its open charge is closed; a past-due subscription whose latest invoice it is (for a sent invoice: whose dunning it drives) returns to `active` (as Stripe). A paid invoice is refunded instead, and an invoice whose charge is in flight waits for its answer: 409 `state_conflict`, nothing changed.",
  "payments.markInvoiceUncollectible":
    "Marks an issued unpaid invoice (`open`, `retrying`, `failed`) uncollectible: still owed but written off; its dunning retries (or a sent invoice's reminders) stop (`v2.invoice.marked_uncollectible`), and a past-due subscription whose latest invoice it is (for a sent invoice: whose dunning it drives) returns to `active` (as Stripe). It can still be voided, or paid on its hosted page (`v2.invoice.paid`). Anything else: 409 `state_conflict`, nothing changed.",
  "payments.refund":
    "Refunds all or part of a paid trade (never more than what is left of it). A refund that succeeded names its credit note (`credit_note_id`, `credit_note_number`: the `refund` invoice against the invoice it pays back); `null` while it is pending or when the trade paid no invoice.",
  "payments.getRefund": "One refund.",
  "payments.refunds": "Refunds, with cursor pagination.",
  "payments.tradeRefunds": "The refunds of one trade.",
  "sandbox.advanceClock":
    "Moves a sandbox merchant's frozen clock forward and runs everything due on the way (renewals, trials, dunning); long runs continue in the background.",
  "sandbox.clock": "A sandbox merchant's clock: the frozen time, the target of an advance still running.",
  "webhooks.events": "Webhook events, newest first, with their delivery status.",
  "webhooks.endpoints": "The merchant's webhook endpoints.",
  "webhooks.createEndpoint": "Creates a webhook endpoint; its signing secret is returned once.",
  "webhooks.updateEndpoint": "Updates a webhook endpoint's URL, events or status.",
  "webhooks.deleteEndpoint": "Deletes a webhook endpoint; its pending deliveries stop.",
  "webhooks.resendEvent": "Delivers an event again to every endpoint subscribed to it.",
  "discounts.create":
    "Creates a discount in the merchant's currency: `percent_off` (1 to 100) for a percentage, `amount_off` for a fixed amount; `duration_cycles` for a repeating one; an optional customer-facing `code`, unique per merchant.",
  "discounts.list": "The merchant's discounts, newest first, with cursor pagination and `status` and `code` filters.",
  "discounts.get": "One discount, with how many times it was redeemed.",
  "discounts.end": "Ends a discount: no new redemption from now on; subscriptions that carry it keep it.",
  "discounts.applyToSubscription":
    "Applies a discount (`discount_id` or `discount_code`) to a live subscription from its next cycle on, for the discount's duration; counted as a redemption.",
  "discounts.removeFromSubscription": "Removes a discount from a subscription: its next cycles are billed without it.",
  "taxRates.create":
    "Creates a tax rate: `percentage` (0 to 100, up to 4 decimals, as a string) for a `country` (ISO 3166-1 alpha-2) and optional `region` (`CA` or `US-CA`), `inclusive` (prices hold it) or exclusive (it is added). One active rate per country and region. Invoices of a customer whose billing address is there carry it.",
  "taxRates.list": "The merchant's tax rates, newest first, with cursor pagination and `status` and `country` filters.",
  "taxRates.get": "One tax rate.",
  "invoiceItems.create":
    "Creates a pending invoice item for a customer: `unit_amount` (a decimal string, not negative) in `currency`, or a one-time catalog price (`price_id`); `quantity` 1 to 1,000,000 (1 by default), `description`. A customer's pending items are in one currency. The next one-off invoice (`POST /api/v1/invoices`) bills it.",
  "invoiceItems.list":
    "The merchant's invoice items, newest first, with cursor pagination, `customer_id` and `pending` (`true`: only pending ones; `false`: only invoiced or deleted ones).",
  "invoiceItems.get": "One invoice item.",
  "meterEvents.send":
    "Ingests one meter event: usage of the billable metric `code` (1 to 64 of a-z, 0-9, _) by `customer_id` (and optionally one of its subscriptions, `subscription_id`), at `timestamp` (RFC 3339 or Unix ms; now when absent; at most 5 minutes ahead of the merchant's clock), with up to 32 `properties` (strings up to 255 characters, booleans, or numbers with at most 6 decimals within ±10^12, stored as exact decimals). A re-sent `transaction_id` (1 to 255 characters, unique per merchant) is not stored again: the answer is the stored event with `duplicate` true.",
  "meterEvents.sendBatch":
    "Ingests 1 to 1,000 meter events in one transaction, each as `POST /api/v1/meter_events` takes it. A bad event refuses the whole batch (the error names `events[i]`); re-sent transaction ids are skipped and listed in `duplicates`; `accepted` counts the events stored.",
  "meterEvents.list":
    "The merchant's meter events, most recently ingested first, optionally of one `customer_id` and one `code`, paged with `starting_after` (an event id) and `limit` (1 to 100, default 10). A voided event shows its `voided_at`.",
  "usageAdjustments.voidEvent":
    "Voids the meter event of `transaction_id`: every aggregation ignores it from now on. When it counted in a closed period of its subscription (one an invoice billed), that period is re-rated at once by the worker: a draft is re-priced, an issued invoice gets a usage adjustment — a credit note to the customer's balance for exactly the re-rated difference (`v2.usage_adjustment.created`). A period that ended more than the metric's `late_window_days` ago is 400 on `timestamp`. Voiding a voided event changes nothing (`voided` false).",
  "usageAdjustments.amendEvent":
    "Amends the meter event of `transaction_id`: voids it and ingests its replacement under the new `transaction_id` (the original's customer, subscription and code; its `timestamp` and `properties` unless given), in one transaction. The closed periods of both are re-rated as for a void or a late event. Sent again, it answers the replacement with `duplicate` true. Refused: a replacement id already taken (400 on `transaction_id`), an original voided without this replacement (409), a period older than the metric's late window (400 on `timestamp`).",
  "usageAdjustments.preview":
    "What re-rating the billed period holding `timestamp` would do, written nowhere: each metric item's amount billed so far (the period's invoice and earlier adjustments) and rated now, the difference, and its `kind`: `draft` (the draft is re-priced), `invoice` (an extra invoice of `amount`), `credit_note` (a credit note of −`amount`, at most what the invoice still holds) or `none`.",
  "usageAdjustments.apply":
    "Applies a pending usage adjustment (the merchant's `usage_adjustments` is `review`): its period is re-rated now and the difference issued — an extra invoice, or a credit note — `status` `applied`, `v2.usage_adjustment.applied`. An applied one, or a period that no longer differs from what it billed, is 409.",
  "usageAdjustments.list":
    "The subscription's usage adjustments, newest first: each re-rating of a closed period after late events or corrections, with the extra invoice or credit note it issued.",
  "invoiceItems.delete":
    "Deletes a pending invoice item: no invoice will bill it. An invoiced or deleted item is 409 `state_conflict`.",
  "invoiceItems.createInvoice":
    "Creates a one-off invoice (`invoice_type` `one_off`) of the customer's pending invoice items (oldest first, up to 100; `currency` chooses when they are in several): taxed at the customer's address, numbered, its items marked invoiced at once (each billed by one invoice only), then charged to the card on file (the card of the customer's newest subscription). Paid: `biz_status` `success` and `v2.invoice.paid`; declined: `failed` and `v2.invoice.payment_failed`, payable on its `hosted_invoice_url`; no card on file: `open`, paid on its `hosted_invoice_url`. Under `send_invoice` — the customer's `collection_method`, or this request's (`collection_method`, with `days_until_due` 1 to 365) — it is not charged but sent: `open` with its `due_date`, `v2.invoice.sent` and an email; past due, `v2.invoice.overdue` and a reminder on each of the merchant's dunning days.",
  "payments.invoiceSettings":
    "How the merchant's invoices are numbered: `invoice_prefix` (`INV` → `INV-000001`, credit notes `INV-CN-000001`).",
  "payments.updateInvoiceSettings":
    "Sets `invoice_prefix` (3 to 12 uppercase letters and digits). A new prefix starts its own gapless sequences at 1; issued invoices keep their numbers.",
  "payments.billingSettings":
    "How the merchant's changes are prorated and its failed renewals retried: `proration_policy` (`per_second`, the default; `per_day`; `fixed_days(n)`), `proration_credit` (`refund`, the default: a downgrade's unused time is refunded to the card; `credit_balance`: kept for the next invoices), `dunning_final_state` (`unpaid` or `canceled`), `dunning_retry_days` (`null`: the engine's default policy) and `dunning_on_decline`: what each class of decline does — `hard` (stolen, lost, fraudulent, closed account, do not honor…), `soft` (insufficient funds, a processing error…), `expired_card` — each `retry` (on the schedule) or `stop` (no more retries: the invoice fails at once and waits for a new payment method, the subscription goes to `dunning_final_state`); `null`: the engine's default (hard and expired stop, soft retries); `invoice_draft_grace_seconds`: how long a renewal's invoice stays an editable draft before it is finalised (0: at once); `usage_adjustments`: what a closed period re-rated after late events or corrections becomes — `automatic` (the default: its extra invoice or credit note issued at once) or `review` (a pending usage adjustment, applied by `POST /api/v1/usage_adjustments/{usage_adjustment_id}/apply`).",
  "payments.updateBillingSettings":
    "Changes the fields given, the others keep their value: `proration_policy` (`per_second`, `per_day` or `fixed_days(n)`, n from 1 to 999), `proration_credit` (`refund` or `credit_balance`), `dunning_final_state` (`unpaid` or `canceled`), `dunning_retry_days` (1 to 10 increasing whole days from 1 to 60 after the first failed renewal; `null` returns to the engine's default), `dunning_on_decline` (an object of `hard`, `soft`, `expired_card`, each `retry` or `stop` — any other key is refused, naming it; the classes given change, the others keep the policy in force; `null` returns to the engine's default), `invoice_draft_grace_seconds` (0 to 2592000, 30 days: a renewal's invoice stays a draft that long, then the worker finalises it; 0 finalises at once, as before), `usage_adjustments` (`automatic` or `review`). Applies from the next quote, change, renewal or failed payment on; what was charged, credited or scheduled before stays.",
  "payments.dunningPreview":
    "The timeline of a failed renewal before a policy is switched on: every charge declined with `decline_class` (`hard`, `soft` or `expired_card`), from `failed_at` (RFC 3339, no later than 9999-01-01T00:00:00Z; default the merchant's clock, a sandbox merchant's frozen clock), under the merchant's dunning policy with the fields given replacing it (`dunning_retry_days`, `dunning_final_state`, `dunning_on_decline`, checked as the billing settings check them). Answers the policy used, what the class does (`action`), each step (`failed`, each `retry`, then `stop` or `exhausted`) with its instant and the subscription's and invoice's status after it, and the end: `final_status` and `next_action` (`new_payment_method`, or `none` once canceled). Nothing is written.",
  "notifications.settings":
    "The merchant's customer-email settings in force — `enabled`, `sender`, `reply_to`, `messages`, `language` — or `null`: no customer email is sent.",
  "notifications.updateSettings":
    "Changes the fields given, the others keep their value (`sender` is required the first time; `messages` among `invoice_issued`, `invoice_past_due`, `payment_receipt`, `payment_failed`, `trial_ending`, `card_expiring`, `subscription_canceled`; `language` `en`, `de` or `fr`); `reset: true` turns customer emails off and forgets the settings.",
  "notifications.list":
    "The merchant's latest 100 customer messages, newest first: `kind`, `cause_key`, `status` (`pending`, `sent`, `skipped` with its reason in `last_error`), `attempts`, `recipient`, `sent_at`.",
  "payments.disputeSettings":
    "What happens to the renewals of a subscription whose charge is under an open fraud dispute (reason `fraudulent`): `fraud_dispute_renewals` `hold` (the default: no off-session charge — renewal, dunning retry, upgrade — is made while the dispute is open; the invoice fails with `dispute_hold` and follows dunning) or `charge` (charged as usual).",
  "payments.updateDisputeSettings":
    "Sets `fraud_dispute_renewals`: `hold` (the default) or `charge`. Applies to the next charge.",
  "subscriptions.updatePaymentMethod":
    "Replaces the subscription's card — `card_number`, `exp_month`, `exp_year` and `cvc` (the sandbox), or `payment_method`, a payment method the processor's form collected (Stripe.js `pm_…`): checked and saved by the payment gateway (nothing charged), then charged by renewals. On a `past_due` subscription the open invoice is retried at once with it: a success returns the subscription to `active` (`retry` holds that charge). A refused card is 400 on `card_number` and changes nothing.",
  "subscriptions.upcomingInvoice":
    "The invoice the subscription's next renewal will issue if nothing changes before it: the next cycle's price (scheduled price and pending quantity applied), usage so far for usage-billed prices, running discounts, credit and tax at the customer's address. `null` when it will not renew (canceled, paused, past due, canceling at the period's end, a fixed term ending). Nothing is written.",
  "portal.createSession":
    "A link to the customer portal for one customer (`customer_id`): their subscriptions, invoices and payment method, working for an hour. Optional `return_url` (the portal's back link) and `flow` (`payment_method_update` opens the card form).",
  "portal.revokeSession":
    "Revokes a portal link: from now on it answers 404, as an unknown link does (the links of a deleted customer stop working the same way). Revoking it again changes nothing; another merchant's link is 404.",
  "payments.paymentSettings":
    "Who charges the merchant's customers: `sandbox` (the default) or `stripe` — with its publishable key, the last 4 of its secret key, whether the webhook signing secret is set, and the `webhook_url` to give Stripe. Secrets are never returned.",
  "payments.updatePaymentSettings":
    "Sets the processor: `provider` `sandbox` (sandbox merchants only: a live merchant's payments never go to the sandbox, 400 on `provider`), or `stripe` with `secret_key` (`sk_…`/`rk_…`) and `publishable_key` (`pk_…`) of the merchant's mode (test keys for a sandbox merchant, live keys for a live one) and optionally `webhook_secret` (`whsec_…`). New keys are verified with Stripe before anything is saved: a key Stripe does not know, or a publishable key of another account, is 400 on that key; Stripe not answering is 503 `service_unavailable` (retry). Secrets are stored encrypted; one left out keeps the stored one. Cards saved with another processor are not moved: customers give theirs again (the portal's card form).",
  "portal.settings":
    "What the merchant's customers may do in the portal: `payment_method_update`, `cancel` (at the period's end, and take it back), `invoice_history`, `switch_prices` (a subscription on one of these prices may switch to another of them, prorated at once; empty: no switching), and `adjust_quantities` (`[{price_id, min, max}]`: an item at one of these prices may change its quantity within the bounds, from its next cycle; empty, the default: no quantity changes). The merchant's own settings, else the server's default.",
  "portal.updateSettings":
    "Changes the fields given (the others keep their value); `reset: true` returns to the server's default. Every price in `switch_prices` (at most 20, each once) must be one of the merchant's active recurring prices; every entry of `adjust_quantities` (at most 20, each price once) an active recurring price billed by quantity, with 1 ≤ `min` (default 1) ≤ `max` ≤ 999,999,999 (400 or 404 naming `adjust_quantities[i].…`).",
  "taxRates.archive": "Archives a tax rate: no new invoice uses it; issued invoices keep their tax lines.",
  "billableMetrics.create":
    "Creates a billable metric: `code` (1 to 64 of `a-z 0-9 _`, unique per merchant, fixed; a code in use, archived or not, is 409 `duplicate_resource`), `name`, `description`, `aggregation` (`count`, `sum`, `max`, `unique_count`, `latest`, `weighted_sum`: see docs/usage.md), `property` (the event property read; required for all but `count`, which takes none), `filters` (at most 10: `{property, values}` with 1 to 50 string values; an event counts when every filter holds), `group_by` (at most 3 properties: the value is split by their values, and a usage price rates one group through `metric_group`) and `late_window_days` (0 to 365, default 35: how long after a period ends its events still count).",
  "billableMetrics.list":
    "The merchant's billable metrics, newest first, with cursor pagination and `status` (`active`, `archived`) and `code` filters.",
  "billableMetrics.get": "One billable metric, by its id (`bm_…`) or its code.",
  "billableMetrics.update":
    "Changes an active metric's `name`, `description` (`null` clears it), `filters` (replaced as a whole) or `late_window_days`. `code`, `aggregation`, `property` and `group_by` are fixed (400 naming the field). An archived metric is 409 `state_conflict`.",
  "billableMetrics.archive":
    "Archives a billable metric: no new price may reference it (400 on `billable_metric_id`); prices that already do keep billing it. Archiving twice is 409 `state_conflict`.",
  "usageAlerts.create":
    "Creates a usage alert on a subscription's billable metric (`billable_metric_id`: its id or code): 1 to 20 `thresholds` `{type, value, recurring}` — `type` `value` (the metric's value aggregated over the open cycle, ungrouped) or `amount` (what the subscription's items of that metric bill so far, in its currency, before discounts and tax); `recurring: true` fires again at each multiple (at most one per alert). Each threshold fires `v2.usage_alert.triggered` once per cycle when reached (`≥`); the crossings resolve (`v2.usage_alert.resolved`) when the next cycle starts. Checked after ingestion by a coalesced worker job (within about 5 seconds), never on the ingestion path. At most 25 alerts per subscription; a canceled subscription is 409.",
  "usageAlerts.list": "The merchant's usage alerts, newest first, by `subscription_id` or `customer_id`.",
  "usageAlerts.get": "One usage alert, with the keys of the thresholds fired in its cycle (`fired`, `cycle_index`).",
  "usageAlerts.delete": "Deletes a usage alert: it fires nothing more. Answers it as it was.",
  "usageAlerts.progressiveBilling":
    "A subscription's progressive billing: its threshold, and what progressive invoices billed in the open cycle (per item, cumulative) and their ids.",
  "usageAlerts.setProgressiveBilling":
    "Sets the subscription's `progressive_billing_threshold` (an amount in its currency) or turns it off (`null`). Whenever the usage its metric items accrued in the open cycle and no invoice billed yet reaches the threshold, it is invoiced at once on a `progressive` invoice (charged to the card on file, or sent per the collection method); the renewal's invoice deducts what was invoiced early, one line per item (docs/usage.md).",
  "entitlements.list":
    "The customer's entitlements: the features (`entitlements` of each subscription item's product, then its price version's — an add-on item's too) of its subscriptions whose state grants under the merchant's policy, merged — booleans OR, numbers the largest — and those subscriptions' ids. Computed from the subscriptions as committed, so it reflects a checkout, switch, cancel or failed renewal as soon as that call returns. 404 for an unknown customer.",
  "entitlements.check":
    "One feature of the customer: its `value` (`null` when no granting subscription has it) and `enabled` (`true`, or a number above 0).",
  "entitlements.settings":
    "Which subscription states grant entitlements: `granting_statuses` (default `trial`, `active`, `past_due`; `paused` and `unpaid` may be added; `init`, `incomplete` and `canceled` never grant).",
  "entitlements.setProductEntitlements":
    "Replaces the features the product declares (`entitlements`: at most 50, names `^[a-z][a-z0-9_]{0,63}$`, booleans or safe integers). Customers' entitlements follow on the next read; no `v2.entitlements.updated` is sent for this change.",
  "entitlements.updateSettings":
    "Sets `granting_statuses` (any of `trial`, `active`, `past_due`, `paused`, `unpaid`; `null` returns to the default). Applies to the next read; no `v2.entitlements.updated` is sent for the change of policy."
}

/** Required request-body fields, by `operationId` (conditional ones are in the descriptions). */
const required: Record<string, ReadonlyArray<string>> = {
  "catalog.createProduct": ["product_name"],
  "catalog.createPrice": ["name", "product_id", "currency", "billing_type", "price_type"],
  "catalog.createMigration": ["from_version_id", "to_version_id"],
  "catalog.createPriceVersion": ["name", "currency", "billing_type", "price_type"],
  "checkout.create": ["line_items"],
  "payments.refund": ["trade_id"],
  "subscriptions.recordUsage": ["usage_count"],
  "subscriptions.recordUsageBatch": ["records"],
  "webhooks.createEndpoint": ["url"],
  "sandbox.advanceClock": ["frozen_time"],
  "discounts.create": ["name", "discount_type"],
  "discounts.removeFromSubscription": ["discount_id"],
  "taxRates.create": ["name", "percentage", "country"],
  "billableMetrics.create": ["code", "name", "aggregation"],
  "usageAlerts.create": ["subscription_id", "billable_metric_id", "thresholds"],
  "usageAlerts.setProgressiveBilling": ["progressive_billing_threshold"],
  "invoiceItems.create": ["customer_id"],
  "meterEvents.send": ["transaction_id", "customer_id", "code"],
  "meterEvents.sendBatch": ["events"],
  "usageAdjustments.amendEvent": ["transaction_id"],
  "usageAdjustments.preview": ["timestamp"],
  "invoiceItems.createInvoice": ["customer_id"],
  "payments.updateInvoiceSettings": ["invoice_prefix"],
  "payments.updateDisputeSettings": ["fraud_dispute_renewals"],
  "portal.createSession": ["customer_id"],
  "customerBalances.adjust": ["amount", "currency", "reason"],
  "customerBalances.creditNote": ["amount"],
  "creditGrants.create": ["amount", "currency", "reason", "category"],
  "creditGrants.topUp": ["amount", "currency"],
  "creditGrants.autoTopUp": ["enabled", "threshold", "amount", "currency"],
  "entitlements.setProductEntitlements": ["entitlements"]
}

/** Allowed values of request-body fields, wherever the field appears. */
const enums: Record<string, ReadonlyArray<string>> = {
  billing_type: Price.BillingType.literals,
  price_type: Price.PriceType.literals,
  model_type: Price.ModelType.literals,
  payment_timing: Price.PaymentTiming.literals,
  billing_dimension: Price.BillingDimension.literals,
  discount_type: Price.DiscountType.literals,
  billing_cycle_unit: BillingPeriod.BillingCycleUnit.literals,
  trial_period_unit: BillingPeriod.IntervalUnit.literals,
  period_unit: BillingPeriod.IntervalUnit.literals,
  effective_type: ["immediate", "end_of_period"],
  proration: ["always_invoice", "create_prorations", "none", "immediate"],
  cancel_type: ["immediate", "end_of_period"]
}

/** Allowed values of fields of one operation's body, where a field name means something else elsewhere. */
const operationEnums: Record<string, Record<string, ReadonlyArray<string>>> = {
  "discounts.create": { discount_type: Discount.DiscountType.literals, duration: Discount.DiscountDuration.literals },
  "customerBalances.creditNote": { method: ["credit_balance", "reduce_invoice", "refund"] },
  "creditGrants.create": { category: ["paid", "promotional"] }
}

const isNull = (s: unknown) => typeof s === "object" && s !== null && (s as Json).type === "null"

/**
 * A request body's schema as the server reads it: `additionalProperties: false` removed (unknown
 * fields are accepted and ignored), an optional field's `anyOf [T, null]` back to `T` (the
 * generator writes "may be absent" as null, but a JSON null is refused), enums added.
 */
const loosen = (schema: unknown, allowedValues: Record<string, ReadonlyArray<string>> = enums): unknown => {
  if (Array.isArray(schema)) return schema.map((s) => loosen(s, allowedValues))
  if (typeof schema !== "object" || schema === null) return schema
  const anyOf = (schema as Json).anyOf
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNull)) {
    const { anyOf: _, ...rest } = schema as Json
    return loosen({ ...rest, ...anyOf.find((s) => !isNull(s)) }, allowedValues)
  }
  const out: Json = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === "additionalProperties" && v === false) continue
    out[k] = loosen(v, allowedValues)
  }
  if (out.properties && typeof out.properties === "object") {
    for (const [name, property] of Object.entries(out.properties as Json)) {
      const allowed = allowedValues[name]
      if (allowed && typeof property === "object" && property !== null && property.type === "string") {
        ;(out.properties as Json)[name] = { ...property, enum: [...allowed] }
      }
    }
  }
  return out
}

/** `Schema.Struct({})` is written as "anything but null"; the server answers `{}`: say so. */
const emptyObjects = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(emptyObjects)
  if (typeof schema !== "object" || schema === null) return schema
  const keys = Object.keys(schema)
  if (keys.length === 1 && keys[0] === "not" && isNull((schema as Json).not))
    return { type: "object", properties: {}, additionalProperties: false }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, emptyObjects(v)]))
}

/** Allowed values of list filters, by operation and query parameter (the handlers refuse others with 400). */
const queryEnums: Record<string, Record<string, ReadonlyArray<string>>> = {
  "catalog.prices": { status: Lifecycle.PriceVersionStatus.literals },
  "subscriptions.list": {
    status: Lifecycle.SubscriptionStatus.literals,
    billing_cycle_unit: BillingPeriod.BillingCycleUnit.literals
  },
  "payments.trades": { trade_status: Lifecycle.TradeStatus.literals },
  "payments.invoices": { biz_status: Lifecycle.InvoiceStatus.literals, invoice_types: Invoice.InvoiceType.literals },
  "webhooks.events": { event_statuses: Lifecycle.DeliveryStatus.literals, event_types: Lifecycle.EventType.literals },
  "webhooks.endpoints": { status: Lifecycle.EndpointStatus.literals },
  "discounts.list": { status: Lifecycle.DiscountStatus.literals },
  "taxRates.list": { status: Lifecycle.TaxRateStatus.literals },
  "invoiceItems.list": { pending: ["true", "false"] }
}

/** A query schema (one value or a repeated parameter) whose values are `allowed`. */
const withEnum = (schema: Json, allowed: ReadonlyArray<string>): Json => {
  const one = { type: "string", enum: [...allowed] }
  return Array.isArray(schema.anyOf)
    ? { anyOf: [one, { type: "array", items: one }] }
    : schema.type === "array"
      ? { type: "array", items: one }
      : one
}

const integerLimit = { type: "integer", minimum: 1, maximum: 100, default: 10 }

const operation = (op: Json): Json => {
  const id = String(op.operationId ?? "")
  const next: Json = { ...op }
  const description = descriptions[id]
  if (description !== undefined) next.description = description
  if (Array.isArray(op.parameters)) {
    next.parameters = op.parameters.map((p: Json) =>
      p.in === "query" && queryEnums[id]?.[p.name] !== undefined
        ? { ...p, schema: withEnum(p.schema ?? {}, queryEnums[id]![p.name]!) }
        : p.in === "query" && p.name === "limit"
          ? { ...p, schema: integerLimit, description: "Items per page, 1 to 100 (default 10)." }
          : id === "subscriptions.usage" && p.in === "query" && p.name === "merchant_id"
            ? { ...p, required: true }
            : p
    )
  }
  if (op.responses) next.responses = emptyObjects(op.responses)
  const content = op.requestBody?.content?.["application/json"]
  if (content?.schema) {
    const schema = loosen(content.schema, { ...enums, ...operationEnums[id] }) as Json
    const fields = required[id]
    next.requestBody = {
      ...op.requestBody,
      required: true,
      content: {
        ...op.requestBody.content,
        "application/json": {
          ...content,
          schema: fields ? { ...schema, required: [...fields] } : schema
        }
      }
    }
  }
  return next
}

/**
 * The document's additions, as an `OpenApi.Transform` of the whole API.
 */
export const describe = (spec: Json): Json => ({
  ...spec,
  info: {
    ...spec.info,
    description:
      "The merchant API of Recur, an embeddable subscription-billing engine: customers, products and versioned prices, checkout sessions and their hosted page, subscriptions with proration, usage, invoices, refunds, webhooks and sandbox clocks. Every call needs `Authorization: Bearer <API key>` and a unique `Request-Id` header; every answer is the envelope `{code, message, data}`.",
    contact: { name: "Recur", url: "https://github.com/recur-billing/recur" },
    license: { name: "MIT", identifier: "MIT" }
  },
  paths: Object.fromEntries(
    Object.entries(spec.paths ?? {}).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops as Json).map(([method, op]) => [
          method,
          typeof op === "object" && op !== null && "responses" in op ? operation(op as Json) : op
        ])
      )
    ])
  )
})
