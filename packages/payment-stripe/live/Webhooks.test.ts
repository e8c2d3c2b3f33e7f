import { describe, expect, it } from "@effect/vitest"
import { Money, type Ports } from "@recur/core"
import { Effect } from "effect"
import type Stripe from "stripe"
import { StripeGateway } from "../src/index.js"
import { client, options, secretKey } from "./env.js"

// Issue 30's webhook cases against Stripe's real test mode (`pnpm test:stripe-live` with
// STRIPE_TEST_SECRET_KEY): the objects are Stripe's own — a dispute made by the test payment
// method `pm_card_createDispute`, a refund made without our metadata as the dashboard makes one —
// and the events carrying them are signed here with a local secret (Stripe cannot reach this
// machine), as Stripe signs them.
const secret = "whsec_recurlivelocalsecret"
const stripe = client()
const gateway = StripeGateway.make({ secretKey, webhookSecret: secret, ...options })
const merchant = "mch_00000000000000000000000000"

const charge = (tradeId: string, paymentMethod: string) =>
  Effect.runPromise(
    gateway.charge({
      trade_id: tradeId,
      merchant_id: merchant,
      customer_id: `cus_live_${tradeId}`,
      amount: Money.make(2000n, "USD"),
      source: { _tag: "PaymentMethod", id: paymentMethod },
      off_session: false
    })
  )

/** An event as Stripe sends it, signed with the local secret, read by the gateway. */
const read = (type: string, object: unknown) => {
  const payload = JSON.stringify({
    id: `evt_live_${Date.now()}`,
    object: "event",
    api_version: null,
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type
  })
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret })
  return Effect.runPromise(
    gateway.webhook!({
      provider: "stripe",
      merchant_id: merchant,
      body: payload,
      headers: { "stripe-signature": header }
    })
  )
}

const intentOf = async (tradeId: string) => {
  for (let i = 0; i < 30; i++) {
    const found = await stripe.paymentIntents.search({ query: `metadata['recur_trade_id']:'${tradeId}'` })
    if (found.data[0] !== undefined) return found.data[0]
    await new Promise((r) => setTimeout(r, 2_000))
  }
  throw new Error(`no intent for ${tradeId}`)
}

describe("Stripe test mode (live): webhooks and disputes", () => {
  it("a dispute Stripe opens is read with its status, amount and evidence deadline", async () => {
    const tradeId = `trd_live_dispute_${Date.now()}`
    expect((await charge(tradeId, "pm_card_createDispute"))._tag).toBe("Succeeded")
    const intent = await intentOf(tradeId)
    let dispute: Stripe.Dispute | undefined
    for (let i = 0; i < 30 && dispute === undefined; i++) {
      dispute = (await stripe.disputes.list({ payment_intent: intent.id })).data[0]
      if (dispute === undefined) await new Promise((r) => setTimeout(r, 2_000))
    }
    expect(dispute).toBeDefined()
    const meaning = await read("charge.dispute.created", dispute)
    expect(meaning._tag).toBe("Success")
    const event = (meaning as { success: Ports.ProcessorEvent }).success
    expect(event).toMatchObject({
      _tag: "Disputed",
      trade_id: tradeId,
      dispute_id: dispute!.id,
      status: "open",
      processor_status: dispute!.status,
      amount: { amount: BigInt(dispute!.amount), currency: "USD" }
    })
    expect(typeof (event as { evidence_due_by?: unknown }).evidence_due_by).toBe("number")
  })

  it("a refund made without our metadata (as the dashboard makes one) is read as the charge's refund", async () => {
    const tradeId = `trd_live_refund_${Date.now()}`
    expect((await charge(tradeId, "pm_card_visa"))._tag).toBe("Succeeded")
    const intent = await intentOf(tradeId)
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 500 })
    const charged = await stripe.charges.retrieve(intent.latest_charge as string)
    const meaning = await read("charge.refunded", charged)
    expect(meaning).toMatchObject({
      _tag: "Success",
      success: {
        _tag: "Refunded",
        trade_id: tradeId,
        processor_refunds: [{ refund_id: refund.id, amount: { amount: 500n, currency: "USD" } }]
      }
    })
  })
})
