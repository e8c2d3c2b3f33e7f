/**
 * The final invoice of a subscription that ends while lines wait for a next invoice that will
 * never come — `create_prorations` lines (canceled now) and a metered item's usage (canceled now
 * or at its period's end): as Stripe's cancel with `invoice_now` and Lago's termination invoice,
 * they are billed at once on an `upgrade` invoice of the cycle (the usage with the discounts its
 * renewal would have applied, taxed at the customer's address, the customer's balance applied —
 * a credit, or a debt carried from an invoice under the processor's minimum charge) —
 * a net charge is charged to the card, so the time served on an upgraded plan and the units used
 * are paid for; a net credit goes to the balance with the tax it was paid with
 * (`BalanceCredit.creditToBalance`), as the renewal would have credited it.
 *
 * @since 0.1.0
 */
import { Effect, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import { newInvoice, type invoiceDocuments } from "../invoices/InvoiceDocuments.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as BalanceCredit from "../invoices/BalanceCredit.js"
import type * as Price from "../catalog/Price.js"
import type * as Ports from "../kernel/Ports.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"
import { underMinimum } from "../payments/Charges.js"
import { newTrade, submitTrade } from "../payments/TradeStore.js"
import type * as Merchant from "../tenants/Merchant.js"
import { withTax } from "../taxes/TaxRates.js"
import * as ChangeQuote from "./ChangeQuote.js"
import * as RenewalPlan from "./RenewalPlan.js"
import * as Subscription from "./Subscription.js"
import type { writes } from "./SubscriptionStore.js"
import { discountRules } from "./SubscriptionTerms.js"

/** The line crediting the customer's balance with what the final invoice could not absorb. */
const CREDITED = "Credited to your balance"

/**
 * The line of a final invoice under the processor's minimum charge: no later invoice will
 * collect it, so it stays on the customer's balance as a debt (docs/decisions.md).
 */
export const OWED = "Under the minimum charge: owed on your balance"

/**
 * What a subscription's final invoice bills, before it is issued, as its lines: the usage it
 * still owes (`usage`, `KeptUsage.finalUsageLines`) and its pending proration lines.
 *
 * @since 0.1.0
 */
export interface Final {
  readonly usage: ReadonlyArray<Invoicing.Line>
  /** The base item's version in force: whether its renewal would bill the usage in arrears. */
  readonly base?: Price.PriceVersion
}

/**
 * What a final invoice of `rec`'s usage still owed and pending lines bills at `at`, before it is
 * issued: the draft (the lines, the discounts the renewal would have applied to the usage, tax at
 * the customer's address, the balance applied, a net credit to the balance with its tax) and the
 * customer's balance after it. None when there is nothing to bill.
 *
 * @since 0.1.0
 */
export const draftOf = (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  Effect.fn("FinalInvoice.draftOf")(function* (
    merchantId: string,
    rec: Entities.SubscriptionRecord,
    final: Final = { usage: [] }
  ) {
    if (rec.pending_prorations.length === 0 && final.usage.length === 0) return Option.none()
    const currency = rec.currency
    const balance = Result.getOrThrow(Money.parse(rec.subscription.credit_balance, currency, { allowNegative: true }))
    const s = rec.subscription
    const lines = Invoicing.total({
      invoice_type: "upgrade",
      cycle_index: s.cycle_index,
      currency,
      lines: [...final.usage, ...RenewalPlan.pendingLines(rec)]
    })
    // the usage's renewal, whose discounts it gets (as `upcoming_invoice` shows them): the ended
    // cycle's own when it bills the usage in arrears (a one-item usage subscription), else the
    // next one's — kept usage of a deleted add-on included, which the next renewal would bill
    const renewalCycle =
      final.base !== undefined && RenewalPlan.inArrears(rec, final.base) ? s.cycle_index : s.cycle_index + 1
    const taxed = yield* withTax(taxes, storage)(
      lines,
      merchantId,
      s.customer_id,
      // a credit applied, or a debt carried from an earlier invoice under the processor's
      // minimum collected, as a renewal applies the balance (no later invoice would collect it)
      balance.amount !== 0n ? balance : undefined,
      final.usage.length > 0 ? discountRules(rec, renewalCycle) : []
    )
    const paid = ChangeQuote.pendingPaid(rec)
    const settled = BalanceCredit.creditToBalance(taxed, paid.tax_lines, paid.paid, CREDITED)
    const after = Money.make(balance.amount - settled.draft.creditApplied.amount + settled.credited.amount, currency)
    return Option.some({ draft: settled.draft, balance: after })
  })

/**
 * Bills `rec`'s usage still owed (`final`) and pending proration lines on a final invoice at `at`
 * (in the caller's transaction): the invoice issued, its trade submitted and its charge scheduled when it has
 * something to charge, and the record without the lines and with the balance after it. Answers
 * the record and the trade to charge once the transaction commits. A total under the processor's
 * minimum charge (`underMinimum`, as a renewal's) is not charged: no later invoice will collect
 * it, so the invoice is paid from the balance (its {@link OWED} line) and the amount stays on the
 * balance as the customer's debt — never a charge the processor refuses and retried forever
 * (docs/decisions.md, "A final invoice under the processor's minimum charge").
 *
 * @since 0.1.0
 */
export const bill =
  (
    storage: StorageService,
    taxes: Ports.TaxCalculator["Service"],
    documents: ReturnType<typeof invoiceDocuments>,
    schedule: ReturnType<typeof writes>["schedule"],
    gateway: Ports.PaymentGateway["Service"]
  ) =>
  (merchant: Merchant.Merchant, rec: Entities.SubscriptionRecord, at: number, final?: Final) =>
    Effect.gen(function* () {
      const planned = yield* draftOf(taxes, storage)(merchant.merchant_id, rec, final)
      if (Option.isNone(planned))
        return { next: rec, tradeToCharge: Option.none<string>(), invoiceId: undefined as string | undefined }
      const owed = (yield* underMinimum(gateway, merchant.merchant_id, planned.value.draft.total))
        ? Invoicing.carry(planned.value.draft, OWED)
        : undefined
      const draft = owed?.draft ?? planned.value.draft
      const balance =
        owed !== undefined
          ? Money.make(planned.value.balance.amount - owed.carried.amount, planned.value.balance.currency)
          : planned.value.balance
      const s = rec.subscription
      const trade =
        draft.total.amount > 0n
          ? yield* newTrade({
              merchant,
              amount: draft.total,
              customer_id: s.customer_id,
              order_id: s.order_id,
              payment_mode: "subscription",
              order_type: "upgrade",
              session: Option.none(),
              line: null,
              tax: draft.tax,
              metadata: {},
              at
            })
          : null
      const inv = yield* newInvoice({
        merchant_id: merchant.merchant_id,
        draft,
        trade_id: trade?.trade_id ?? null,
        subscription_id: s.id,
        price_id: s.price_id,
        price_version_id: s.price_version_id,
        customer_id: s.customer_id,
        order_id: s.order_id,
        trigger: trade ? "charge" : "settle_without_charge",
        at
      })
      yield* Effect.orDie(storage.repository(Entities.invoice).insert(yield* documents.issueOne(merchant, inv)))
      let tradeToCharge = Option.none<string>()
      if (trade !== null) {
        yield* submitTrade(storage, { trade, invoice_id: inv.invoice_id, subscription_id: s.id, at })
        if (rec.payment_token !== null) {
          tradeToCharge = Option.some(trade.trade_id)
          yield* schedule(merchant, "charge", trade.trade_id, at)
        }
      }
      const next: Entities.SubscriptionRecord = {
        ...rec,
        pending_prorations: [],
        // billed once, by this invoice
        ...((final?.usage.length ?? 0) > 0 ? { accrued_usage: "0", kept_usage: [] } : {}),
        subscription: new Subscription.Subscription(
          { ...s, credit_balance: Money.format(balance) },
          { disableChecks: true }
        )
      }
      return { next, tradeToCharge, invoiceId: inv.invoice_id as string | undefined }
    })
