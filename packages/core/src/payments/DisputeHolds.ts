/**
 * Off-session charges held under an open fraud dispute. A payer who tells their bank a charge
 * was not theirs (a dispute with reason `fraudulent`) should not see the same card charged again
 * by the subscription while the bank looks into it: each further charge would likely be disputed
 * too, with its fee. So, unless the merchant's `fraud_dispute_renewals` is `charge`, an
 * off-session charge (a renewal, a dunning retry, an upgrade) of a subscription one of whose
 * charges is under an open fraud dispute, with the card that charge was made with (a card the
 * customer gave since is charged), is not sent to the processor: it fails with the code
 * `dispute_hold`, as a decline would — the invoice follows dunning (the subscription is
 * `past_due`, the merchant's retry days and final state apply) and a retry after the dispute
 * ended charges as usual. A charge the customer makes on session (paying the invoice's page) is
 * never held.
 *
 * The hold wraps the payment port, so every off-session charge the engine makes passes it.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Ports from "../kernel/Ports.js"
import * as Store from "../kernel/Store.js"

/**
 * The code of a charge held under an open fraud dispute.
 *
 * @since 0.1.0
 */
export const HOLD_CODE = "dispute_hold"

/**
 * The payment port with the hold: the gateway beneath for everything else.
 *
 * @since 0.1.0
 */
export const layer: Layer.Layer<Ports.PaymentGateway, never, Ports.PaymentGateway | Store.Storage> = Layer.effect(
  Ports.PaymentGateway,
  Effect.gen(function* () {
    const inner = yield* Ports.PaymentGateway
    const storage = yield* Store.Storage
    const merchants = storage.repository(Entities.merchant)
    const trades = storage.repository(Entities.trade)
    const invoices = storage.repository(Entities.invoice)

    /** The open fraud dispute that holds this charge, if any. */
    const holding = (request: Ports.ChargeRequest) =>
      Effect.gen(function* () {
        if (!request.off_session) return undefined
        const trade = yield* trades.get(request.merchant_id, request.trade_id)
        const subscriptionId = Option.isSome(trade) ? trade.value.value.subscription_id : null
        if (subscriptionId === null) return undefined
        // the subscription's invoices say which of its charges are disputed (marked with their trade)
        const page = yield* invoices.list(request.merchant_id, {
          limit: 100,
          filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
        })
        const charging = request.source._tag === "Token" ? request.source.token : null
        for (const invoice of page.list) {
          if (invoice.dispute_status !== "open" || invoice.trade_id === null) continue
          const disputed = yield* trades.get(request.merchant_id, invoice.trade_id)
          if (Option.isNone(disputed)) continue
          const trade = disputed.value.value.trade
          // the disputed card only: a card the customer gave since is charged (unknown: held)
          const sameCard = trade.payment_token === null || charging === null || trade.payment_token === charging
          if (trade.dispute_status === "open" && trade.dispute?.reason === "fraudulent" && sameCard) {
            // the merchant's policy is read only when a dispute could hold the charge (rarely)
            const merchant = yield* merchants.get(request.merchant_id, request.merchant_id)
            return Option.isSome(merchant) && merchant.value.value.fraud_dispute_renewals === "charge"
              ? undefined
              : trade.dispute
          }
        }
        return undefined
      }).pipe(Effect.orDie)

    return Ports.PaymentGateway.of({
      ...inner,
      charge: (request) =>
        Effect.flatMap(holding(request), (dispute) =>
          dispute === undefined
            ? inner.charge(request)
            : Effect.succeed(
                Ports.ChargeOutcome.Failed({
                  code: HOLD_CODE,
                  message: `Not charged: a charge of this subscription is under an open fraud dispute (${dispute.dispute_id}).`
                })
              )
        )
    })
  })
)
