/**
 * The reference model of an item change (issue 33, 9: `POST /api/v1/subscription/{id}/items`)
 * on a flat monthly subscription of the model — its base item's quantity, its add-on item added,
 * removed or of another quantity — written from docs/proration.md ("Seat changes"): the change
 * prorates the sum of the items, crediting the plan in force (`basis`, the whole item set's full
 * cycle) as a price change does, and charging the new set's full cycle for the unused time.
 * `next_cycle` makes the set the next renewal's. Used by `model/ops/Items.ts`.
 *
 * @since 0.1.0
 */
import { addonMinor, FLAT, flatMinor, fmt, type MSub, pendingModel, prorateModel, type Terms } from "./Reference.js"

/** How an item change settles the rest of the period (`ItemRules.ItemProration`). */
export type ItemMode = "always_invoice" | "create_prorations" | "none" | "next_cycle"

/** What the model says the change's quote must be (the engine's `Quote`, its amounts formatted). */
export interface ItemQuote {
  readonly outcome: string
  readonly credit: string
  readonly charge: string
  readonly net: string
  readonly total: string
  readonly effective_at: number
  readonly billed_at: number | undefined
  readonly lines: ReadonlyArray<{ readonly description: string; readonly amount: string }>
}

/** How a quote line names the subscription's items: `2 × Flat 20.00, 1 × Add-on` (`ItemRules.label`). */
export const itemsLabel = (price: number, qty: bigint, addon: bigint) =>
  [`${qty} × Flat ${FLAT[price]}`, ...(addon > 0n ? [`${addon / addonMinor} × Add-on`] : [])].join(", ")

/** The subscription's items as the engine lists them: [price, quantity], the base item first. */
export const itemsOf = (s: MSub) => [
  [s.merchant.flat[s.price]!, s.qty.toString()],
  ...(s.addon > 0n ? [[s.merchant.addon, (s.addon / addonMinor).toString()]] : [])
]

/**
 * Applies an item change committed now to the model: the base item at quantity `qty`, the add-on
 * billing `addon` a cycle (0: none), settled by `mode`. Answers the quote it must have been.
 *
 * - `next_cycle`: the set waits for the next renewal (nothing prorated), replacing the
 *   end-of-period changes (a scheduled price, a pending quantity).
 * - `none`: the items change now, nothing is charged; the basis stays (the remainder stays paid
 *   at the old set's rate).
 * - `always_invoice`, `create_prorations`: the price change's proration over the new set's full
 *   cycle (`prorateModel`, `pendingModel`): the base price stays, and so does a price scheduled
 *   for the period's end; a pending quantity stays unless the base item's quantity moves.
 */
export const itemsModel = (s: MSub, qty: bigint, addon: bigint, mode: ItemMode): ItemQuote => {
  const zero: Terms = { credit: 0n, charge: 0n, net: 0n }
  const quote = (outcome: string, terms: Terms, total: bigint, effective: number, lines: ItemQuote["lines"]) => ({
    outcome,
    credit: fmt(terms.credit),
    charge: fmt(terms.charge),
    net: fmt(terms.net),
    total: fmt(total),
    effective_at: effective,
    billed_at: outcome === "pending_prorations" ? s.end : undefined,
    lines
  })
  if (mode === "next_cycle") {
    s.pendingItems = { qty, addon }
    s.pending = null
    s.scheduled = null
    return quote("scheduled", zero, 0n, s.end, [])
  }
  const now = s.merchant.now
  const before = itemsLabel(s.price, s.qty, s.addon)
  const after = itemsLabel(s.price, qty, addon)
  const scheduled = s.scheduled
  const pending = qty === s.qty ? s.pending : null
  const newFull = flatMinor(s.price) * qty + addon
  let answer: ItemQuote
  if (mode === "none") {
    s.segments = null
    answer = quote("none", zero, 0n, now, [])
  } else {
    const prorated = mode === "create_prorations"
    const terms = prorated ? pendingModel(s, s.price, newFull) : prorateModel(s, s.price, newFull)
    const outcome = prorated
      ? "pending_prorations"
      : terms.net > 0n
        ? "upgrade"
        : terms.net < 0n
          ? s.merchant.creditMode
          : "none"
    answer = quote(outcome, terms, prorated ? 0n : terms.net, now, [
      { description: `Unused time on ${before}`, amount: fmt(-terms.credit) },
      { description: `Remaining time on ${after}`, amount: fmt(terms.charge) }
    ])
  }
  s.qty = qty
  s.addon = addon
  s.scheduled = scheduled
  s.pending = pending
  return answer
}
