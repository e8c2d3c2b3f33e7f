/**
 * The model run's operations on the plain merchants: what they are, how they read in a log, the
 * next one drawn, and the invoices of a subscription as the model and the engine shape them.
 * Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import type { Billing, Invoice, Ports } from "@recur/core"
import { Effect } from "effect"
import type { ItemMode } from "./ItemsReference.js"
import {
  addonMinor,
  DAY,
  type generator,
  fmt,
  FLAT,
  USAGE,
  type MInvoice,
  type MSub,
  type MMerchant,
  collects,
  paying,
  creditCap,
  refundCap
} from "./Reference.js"
import type { COp } from "./CommercialOps.js"

export const card: Ports.CardInput = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

export type Op =
  | {
      readonly _tag: "Subscribe"
      readonly m: MMerchant
      readonly usage: boolean
      readonly price: number
      readonly qty: bigint
      /**
       * A billing anchor on the 1st of next month (00:00 UTC), the short first period prorated:
       * flat subscriptions of 3 seats (one item), without a draw of its own.
       */
      readonly anchored: boolean
    }
  | { readonly _tag: "Advance"; readonly m: MMerchant; readonly ms: number }
  | {
      readonly _tag: "ChangePrice"
      readonly s: MSub
      readonly target: number
      readonly mode: "immediate" | "none" | "end_of_period" | "create_prorations"
    }
  | {
      readonly _tag: "SwitchInterval"
      readonly s: MSub
      /** The monthly price a yearly subscription switches to. */
      readonly target: number
      readonly mode: "always_invoice" | "create_prorations" | "none"
    }
  | {
      readonly _tag: "ChangeQuantity"
      readonly s: MSub
      readonly qty: bigint
      /**
       * The proration asked: each mode leaves a quantity-only change pending for the next cycle
       * (docs/proration.md); `next_cycle` asks none, the seed's form.
       */
      readonly mode: "always_invoice" | "create_prorations" | "none" | "next_cycle"
    }
  | {
      readonly _tag: "ChangeItems"
      readonly s: MSub
      /** The base item's quantity, the add-on item added, removed, or its quantity (issue 33, 9). */
      readonly change: "base" | "add" | "remove" | "addon"
      /** The base item's new quantity, or the add-on's (none when removed). */
      readonly qty: bigint
      readonly mode: ItemMode
    }
  | { readonly _tag: "Cancel"; readonly s: MSub; readonly atEnd: boolean }
  | { readonly _tag: "RevokeCancel"; readonly s: MSub }
  | { readonly _tag: "Pause"; readonly s: MSub }
  | { readonly _tag: "Resume"; readonly s: MSub }
  | { readonly _tag: "Refund"; readonly s: MSub; readonly index: number; readonly amount: bigint }
  | { readonly _tag: "Usage"; readonly s: MSub; readonly units: number }
  /** A credit note to the balance of part of paid invoice `index` (issue 34, 4). */
  | { readonly _tag: "CreditNote"; readonly s: MSub; readonly index: number; readonly amount: bigint }
  /**
   * A manual adjustment of the subscription's customer's balance (issue 34, 4): a credit
   * (positive) or a debit (negative, never more than the balance holds).
   */
  | { readonly _tag: "Adjust"; readonly s: MSub; readonly amount: bigint }
  /** The subscription's renewal draft voided in its grace period (issue 34, 1). */
  | { readonly _tag: "VoidDraft"; readonly s: MSub; readonly index: number }
  | {
      readonly _tag: "Schedule"
      readonly s: MSub
      readonly target: number
      readonly qty: bigint
      readonly cycles: number
      /** A second phase after the first (a ramp: the next price, another quantity), or none. */
      readonly ramp: { readonly target: number; readonly qty: bigint; readonly cycles: number } | null
      /** At the end of the last phase: released (the last phase kept) or canceled. */
      readonly end: "release" | "cancel"
    }

export const describe = (op: Op | COp): string => {
  const { _tag, ...rest } = op as (Op | COp) & Record<string, unknown>
  const shown = Object.entries(rest).map(
    ([k, v]) => `${k}=${typeof v === "object" && v !== null && "id" in v ? (v as { id: string }).id : String(v)}`
  )
  return `${_tag}(${shown.join(", ")})`
}

const QUANTITY_MODES = ["always_invoice", "create_prorations", "none", "next_cycle"] as const

/** A quantity change, its proration mode taken from the subscription's state (no draw of its own). */
const changeQuantity = (s: MSub, qty: bigint): Op => ({
  _tag: "ChangeQuantity",
  s,
  qty,
  mode: QUANTITY_MODES[(s.invoices.length + Number(qty)) % QUANTITY_MODES.length]!
})

const ITEM_MODES = ["always_invoice", "create_prorations", "none", "next_cycle"] as const

/**
 * An item change of a flat monthly subscription: its base item's quantity (another one, 1 to 6),
 * or the add-on added (1 to 3), removed, or of another quantity (1 to 3); the mode among the four.
 */
const changeItemsOf = (rnd: ReturnType<typeof generator>, s: MSub): Op => {
  const addon = s.addon / addonMinor
  const k = rnd.next()
  const change = addon === 0n ? (k < 0.5 ? "base" : "add") : k < 1 / 3 ? "base" : k < 2 / 3 ? "remove" : "addon"
  const qty =
    change === "base"
      ? ((s.qty + BigInt(rnd.int(0, 4))) % 6n) + 1n
      : change === "add"
        ? BigInt(rnd.int(1, 3))
        : change === "addon"
          ? ((addon + BigInt(rnd.int(0, 1))) % 3n) + 1n
          : 0n
  return { _tag: "ChangeItems", s, change, qty, mode: rnd.pick(ITEM_MODES) }
}

/**
 * A schedule from the next period: one phase of `target` × `qty` for `cycles`, then — for about
 * half of them — a second phase (the next price, another quantity, 4 − `cycles` cycles), ending
 * released or (about a third) canceled. The second phase and the end come from the drawn values,
 * without draws of their own.
 */
const scheduleOf = (s: MSub, family: number, target: number, qty: bigint, cycles: number): Op => ({
  _tag: "Schedule",
  s,
  target,
  qty,
  cycles,
  ramp:
    (Number(qty) + cycles) % 2 === 0
      ? { target: (target + 1) % family, qty: s.usage ? 1n : (qty % 6n) + 1n, cycles: 4 - cycles }
      : null,
  end: (target + cycles) % 3 === 0 ? "cancel" : "release"
})

/**
 * The form of an issue 33 operation, for the run's summary: an anchored subscription, a quantity
 * change's mode, an item change's mode, a schedule's phases and end.
 */
export const variantOf = (op: Op): string | undefined =>
  op._tag === "Subscribe"
    ? op.anchored
      ? "subscribe anchored"
      : undefined
    : op._tag === "ChangeQuantity"
      ? `quantity ${op.mode}`
      : op._tag === "ChangeItems"
        ? `items ${op.mode}`
        : op._tag === "Schedule"
          ? `schedule ${op.ramp === null ? 1 : 2} phase${op.ramp === null ? "" : "s"} then ${op.end}`
          : undefined

/** The next operation: mostly valid ones, weighted towards what moves money. */
export const nextOp = (rnd: ReturnType<typeof generator>, merchants: ReadonlyArray<MMerchant>, maxSubs: number): Op => {
  const m = rnd.pick(merchants)
  const live = m.subs.filter((s) => s.status !== "canceled")
  const roll = rnd.next()
  if (live.length === 0 || (roll < 0.1 && live.length < maxSubs)) {
    const usage = rnd.next() < 0.25
    const price = rnd.int(0, (usage ? USAGE.length : FLAT.length) - 1)
    const qty = usage ? 1n : BigInt(rnd.int(1, 5))
    return { _tag: "Subscribe", m, usage, price, qty, anchored: !usage && qty === 3n }
  }
  if (roll < 0.28) {
    const r = rnd.next()
    const ms =
      r < 0.5
        ? rnd.int(1, 72) * 3_600_000
        : r < 0.85
          ? rnd.int(1, 12) * DAY + rnd.int(0, 86_399) * 1000
          : rnd.int(25, 70) * DAY
    // with a grace period, a move past the next renewal stops half an hour after it (its invoice
    // still a draft) when the draw is odd: the operations then meet drafts
    if (m.grace > 0 && Math.floor(ms / 3_600_000) % 2 === 1) {
      const next = Math.min(...live.filter((s) => s.status === "active").map((s) => s.end))
      const inside = next + m.grace / 2 - m.now
      if (inside > 0 && inside < ms) return { _tag: "Advance", m, ms: inside }
    }
    return { _tag: "Advance", m, ms }
  }
  // on the merchant with a grace period, half the operations go to a subscription whose renewal
  // is still a draft, when there is one (changes, cancels, refunds, voids in the grace period)
  const drafted =
    m.grace > 0 && roll >= 0.64 ? live.filter((s) => s.invoices.some((i) => i.draftUntil !== undefined)) : []
  const picked = rnd.pick(live)
  const s = drafted.length > 0 ? drafted[0]! : picked
  const r = rnd.next()
  if (s.status === "paused")
    return r < 0.8
      ? { _tag: "Resume", s }
      : r < 0.9
        ? { _tag: "Cancel", s, atEnd: false }
        : { _tag: "ChangePrice", s, target: (s.price + 1) % (s.usage ? USAGE.length : FLAT.length), mode: "immediate" }
  // an item change (issue 33, 9): the top of the price changes' range, on flat monthly subscriptions
  if (r >= 0.42 && r < 0.5 && !s.usage && s.months === 1) return changeItemsOf(rnd, s)
  if (r < 0.5) {
    const family = s.usage ? USAGE.length : FLAT.length
    const target = (s.price + rnd.int(1, family - 1)) % family
    const mode = rnd.pick([
      "immediate",
      "immediate",
      "create_prorations",
      "create_prorations",
      "none",
      "end_of_period"
    ] as const)
    // a yearly subscription's every price change is a switch back to a monthly price
    if (!s.usage && (s.months === 12 || r < 0.06))
      return {
        _tag: "SwitchInterval",
        s,
        target: rnd.int(0, FLAT.length - 1),
        mode: rnd.pick(["always_invoice", "always_invoice", "create_prorations", "none"] as const)
      }
    return { _tag: "ChangePrice", s, target, mode }
  }
  // a draft in its grace period voided (issue 34, 1): the quantity, usage and refunds' ranges,
  // before the clock finalises it
  const draft = s.invoices.findIndex((i) => i.draftUntil !== undefined)
  if (r >= 0.5 && r < 0.8 && draft >= 0) return { _tag: "VoidDraft", s, index: draft }
  if (r < 0.6) return s.usage ? { _tag: "Usage", s, units: rnd.int(1, 5000) } : changeQuantity(s, BigInt(rnd.int(1, 6)))
  if (r < 0.7 && s.usage) return { _tag: "Usage", s, units: rnd.int(1, 100_000) }
  if (r < 0.8) {
    // the top of the range a credit note to the balance (issue 34) instead of a refund: never
    // more than the invoice and its cycle still hold (its applied credit included)
    const note = r >= 0.77
    const cap = note ? creditCap : refundCap
    // never more than the invoice's trade, its cycle and it still hold
    const paid = s.invoices
      .map((i, k) => [i, k] as const)
      .filter(([i]) => (note ? collects(i) : paying(i)) && cap(s, i) > 0n)
    if (paid.length > 0) {
      const [inv, k] = rnd.pick(paid)
      const left = cap(s, inv)
      const amount = rnd.next() < 0.3 ? left : BigInt(rnd.int(1, Number(left)))
      return note ? { _tag: "CreditNote", s, index: k, amount } : { _tag: "Refund", s, index: k, amount }
    }
  }
  if (r < 0.86) return { _tag: "Cancel", s, atEnd: rnd.next() < 0.7 }
  if (r < 0.9) return { _tag: "RevokeCancel", s }
  if (r < 0.93 && !s.usage && !s.cancelAtEnd && (s.schedule ?? null) === null) return { _tag: "Pause", s }
  // a schedule of one phase from the next period, on a subscription with nothing waiting for it
  if (
    r < 0.97 &&
    s.status === "active" &&
    (s.schedule ?? null) === null &&
    s.scheduled === null &&
    s.pending === null &&
    !s.cancelAtEnd &&
    // one item on the monthly prices: a schedule's phase holds one item, on the current interval
    s.addon === 0n &&
    s.months === 1
  ) {
    const family = s.usage ? USAGE.length : FLAT.length
    return scheduleOf(s, family, rnd.int(0, family - 1), s.usage ? 1n : BigInt(rnd.int(1, 6)), rnd.int(1, 3))
  }
  const hours = rnd.int(1, 48)
  // the top of the range a manual adjustment of the balance (issue 34): a credit of 0.37 × the
  // hours drawn, or — every third one with a balance — a debit of at most what it holds
  if (r >= 0.97) {
    const amount = BigInt(hours) * 37n
    return hours % 3 === 0 && s.credit > 0n
      ? { _tag: "Adjust", s, amount: -(amount < s.credit ? amount : s.credit) }
      : { _tag: "Adjust", s, amount }
  }
  return { _tag: "Advance", m, ms: hours * 3_600_000 }
}

export const invoicesOfSub = (
  billing: Billing.Billing["Service"],
  merchantId: string,
  subscriptionId: string,
  newest: number
) =>
  Effect.gen(function* () {
    const out: Array<Invoice.Invoice> = []
    let cursor: string | undefined
    while (out.length < newest) {
      const page = yield* billing.listInvoices(merchantId, {
        limit: Math.min(100, newest - out.length),
        ...(cursor ? { starting_after: cursor } : {}),
        filters: [{ column: "subscription_id", op: "in", values: [subscriptionId] }]
      })
      out.push(...page.list)
      if (!page.has_more) break
      cursor = page.list[page.list.length - 1]!.invoice_id
    }
    return out
  })

/** The model's invoice as the engine shows it: a credit note is a `refund` document. */
export const shape = (i: MInvoice) => [i.type === "credit_note" ? "refund" : i.type, i.cycle, fmt(i.amount)] as const
export const engineShape = (i: Invoice.Invoice) => [i.invoice_type, i.cycle_index, i.amount] as const
