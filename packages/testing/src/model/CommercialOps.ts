/**
 * The commercial model's price changes (the numbers of a prorated change, the known
 * disagreements of issue 29's items) and its random operations. Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { DAY, type generator, halfEven, unused } from "./Reference.js"
import {
  RATES,
  COUNTRIES,
  type Country,
  CPRICES,
  cMinor,
  productOf,
  halfUp,
  type CDiscount,
  type CCustomer,
  type CSub,
  type CMerchant,
  cPaying,
  rateOf,
  endOutOfScope,
  discounted,
  sumOf,
  exclOf,
  linesOn,
  cycleLedger,
  heldNet,
  cSharesOf,
  refundableOf,
  newInvoice,
  refundDoc
} from "./Commercial.js"

/**
 * The numbers of an immediate prorated change of `s` to `target`, without changing anything.
 *
 * The credit of the old plan is what was paid for it and is still held (never more than the
 * cycle's held basis); the charge is the new plan's remaining time after the discounts still in
 * scope. An upgrade's charge is taxed at the customer's rate now, its credit gives back the
 * shares of the cycle's invoices with their own tax (negative lines); a downgrade gives back the
 * net grossed up by the exclusive tax collected, in shares with their invoices' tax.
 */
export const cPlan = (s: CSub, target: number) => {
  const [u, total] = unused(s.m.policy, s.start, s.end, s.m.now)
  const prorated = halfEven(s.basis * u, total)
  const col = cycleLedger(s, s.cycle)
  const held = heldNet(col)
  const credit = prorated < held ? prorated : held
  const terms = s.terms
  endOutOfScope(s, target)
  const newFull = discounted(s, target, s.cycle)
  const outOfScope = s.terms.length !== terms.length
  s.terms = terms
  const charge = halfEven(newFull * u, total)
  const net = charge - credit
  const now = rateOf(s.cust, s.m)
  // the rate now differs from one the cycle's invoices were taxed at (item 3 of issue 29)
  const rateChanged = col.invoices.some(
    (i) =>
      (i.lines.length === 0) !== (now === null) || i.lines.some((l) => now !== null && l.inclusive !== now.inclusive)
  )
  if (net > 0n) {
    const chargeLines = linesOn(charge, now)
    const back = credit > 0n ? cSharesOf(col, credit) : []
    const backLines = back.flatMap((sh) => sh.lines)
    const lines = [...chargeLines, ...backLines.map((l) => ({ inclusive: l.inclusive, amount: -l.amount }))]
    const due = net + exclOf(lines)
    return {
      kind: "upgrade" as const,
      net,
      credit,
      charge,
      due,
      lines,
      back,
      newFull,
      outOfScope,
      rateChanged,
      capped: credit < prorated
    }
  }
  const back = net < 0n ? cSharesOf(col, -net) : []
  return {
    kind: "back" as const,
    net,
    credit,
    charge,
    due: 0n,
    lines: [],
    back,
    newFull,
    outOfScope,
    rateChanged,
    capped: credit < prorated
  }
}

/**
 * Whether an operation meets one of the engine's known disagreements with the intended rules
 * (issue 29, items 1–4, all fixed since); `avoid` leaves these out — a debugging knob, the
 * default runs are strict.
 */
export const knownDisagreement = (op: COp): 0 | 1 | 2 | 3 | 4 => {
  const limitReached = (d: CDiscount, c: CCustomer) =>
    d.perCustomer !== null && (c.redeemed.get(d.id) ?? 0) >= d.perCustomer
  switch (op._tag) {
    case "CSubscribe":
      return op.code !== null && limitReached(op.code, op.cust) ? 2 : 0
    case "CApplyDiscount":
      if (limitReached(op.d, op.s.cust)) return 2
      // a change already scheduled to a product outside the discount's scope
      return op.d.products.length > 0 && op.s.scheduled !== null && !op.d.products.includes(productOf(op.s.scheduled))
        ? 1
        : 0
    case "CChange": {
      const s = op.s
      if (s.terms.some((t) => t.d.products.length > 0 && !t.d.products.includes(productOf(op.target)))) return 1
      if (op.mode !== "immediate") return 0
      const p = cPlan(s, op.target)
      return p.rateChanged ? 3 : p.capped ? 4 : 0
    }
    case "CRefund":
      return op.amount > refundableOf(op.s, op.s.invoices[op.index]!) ? 4 : 0
    default:
      return 0
  }
}

/** Upgrades settled at 0.00 with the rest credited to the balance (counted for the run's summary). */
export const settledToBalance = { n: 0 }

/**
 * An immediate prorated change (docs/proration.md, docs/taxes.md): answers the quote's net, tax
 * and total (what moves now, tax included: charged > 0, given back < 0).
 */
export const cProrate = (s: CSub, target: number) => {
  const p = cPlan(s, target)
  endOutOfScope(s, target)
  s.price = target
  s.scheduled = null
  s.basis = p.newFull
  if (p.kind === "upgrade") {
    // the credit's shares move out of the invoices that paid the old plan into the upgrade's
    const moved = p.back.reduce((a, sh) => a + sh.amount, 0n)
    const up = newInvoice("upgrade", s.cycle, p.due > 0n ? p.due : 0n, p.lines)
    up.movedIn = moved
    for (const sh of p.back) sh.inv.movedOut += sh.amount
    if (p.due < 0n) {
      // more given back than the charge costs: settled at 0.00, the rest to the balance
      settledToBalance.n++
      up.creditedFrom = -p.due
      s.credit += -p.due
      s.credited += -p.due
    }
    s.invoices.push(up)
    return { net: p.net, tax: sumOf(p.lines), total: p.due }
  }
  // each share refunded from its invoice's trade (refund mode) with its tax, the part a trade
  // cannot take (credit applied) and everything in credit mode credited against its invoice
  for (const sh of p.back) {
    const i = sh.inv
    let take = 0n
    if (s.m.creditMode === "refund") {
      const cash = i.amount - i.refunded
      take = cash < sh.amount ? cash : sh.amount
      if (take > 0n)
        refundDoc(
          s,
          i,
          take,
          take >= sh.amount ? sh.lines : sh.lines.map((l) => ({ ...l, amount: halfUp(l.amount * take, sh.amount) }))
        )
    }
    i.creditedFrom += sh.amount - take
    s.credit += sh.amount - take
    s.credited += sh.amount - take
  }
  const back = p.back.reduce((a, sh) => a + sh.amount, 0n)
  const tax = p.back.reduce((a, sh) => a + sumOf(sh.lines), 0n)
  return { net: p.net, tax: -tax, total: -back }
}

export type COp =
  | {
      readonly _tag: "CSubscribe"
      readonly m: CMerchant
      readonly cust: CCustomer
      readonly price: number
      readonly qty: bigint
      readonly code: CDiscount | null
    }
  | { readonly _tag: "CAdvance"; readonly m: CMerchant; readonly ms: number }
  | {
      readonly _tag: "CChange"
      readonly s: CSub
      readonly target: number
      readonly mode: "immediate" | "none" | "end_of_period"
    }
  | { readonly _tag: "CApplyDiscount"; readonly s: CSub; readonly d: CDiscount }
  | { readonly _tag: "CRemoveDiscount"; readonly s: CSub; readonly d: CDiscount }
  | { readonly _tag: "CMove"; readonly cust: CCustomer; readonly country: Country }
  | { readonly _tag: "CAddRate"; readonly m: CMerchant; readonly country: string }
  | { readonly _tag: "CArchiveRate"; readonly m: CMerchant; readonly country: string }
  | { readonly _tag: "CRefund"; readonly s: CSub; readonly index: number; readonly amount: bigint }
  | { readonly _tag: "CDecline"; readonly s: CSub }
  | { readonly _tag: "CRecover"; readonly s: CSub }
  | { readonly _tag: "CCancel"; readonly s: CSub }

export const cNextOp = (
  rnd: ReturnType<typeof generator>,
  merchants: ReadonlyArray<CMerchant>,
  maxSubs: number
): COp => {
  const m = rnd.pick(merchants)
  const roll = rnd.next()
  const live = m.subs.filter((s) => s.status === "active")
  if (live.length === 0 || (roll < 0.1 && live.length < maxSubs)) {
    const cust = rnd.pick(m.customers)
    const price = rnd.int(0, CPRICES.length - 1)
    const codes = m.discounts.filter((d) => d.products.length === 0 || d.products.includes(productOf(price)))
    return {
      _tag: "CSubscribe",
      m,
      cust,
      price,
      qty: BigInt(rnd.int(1, 3)),
      code: rnd.next() < 0.6 ? rnd.pick(codes) : null
    }
  }
  const late = live.find((s) => s.pastDue !== null)
  // a declined renewal: the customer saves a new card before the first retry, or it comes
  if (late !== undefined && rnd.next() < 0.35) return { _tag: "CRecover", s: late }
  if (roll < 0.25) {
    const r = rnd.next()
    const ms =
      r < 0.5
        ? rnd.int(1, 72) * 3_600_000
        : r < 0.85
          ? rnd.int(1, 12) * DAY + rnd.int(0, 86_399) * 1000
          : rnd.int(25, 40) * DAY
    return { _tag: "CAdvance", m, ms }
  }
  if (late === undefined && roll < 0.29) {
    // the next renewal of the merchant, when no other renews at the same instant, is declined
    const next = live.reduce((a, s) => (s.end < a.end ? s : a))
    if (live.filter((s) => s.end === next.end).length === 1) return { _tag: "CDecline", s: next }
  }
  if (roll < 0.31) {
    // mostly a customer with a running subscription (a move then meets its next change)
    const cust = rnd.next() < 0.7 ? rnd.pick(live).cust : rnd.pick(m.customers)
    return { _tag: "CMove", cust, country: rnd.pick(COUNTRIES) }
  }
  if (roll < 0.35) {
    const country = rnd.pick(Object.keys(RATES))
    return m.rates.has(country) ? { _tag: "CArchiveRate", m, country } : { _tag: "CAddRate", m, country }
  }
  const current = live.filter((x) => x.pastDue === null)
  if (current.length === 0) return { _tag: "CAdvance", m, ms: rnd.int(1, 48) * 3_600_000 }
  const s = rnd.pick(current)
  const r = rnd.next()
  if (r >= 0.97) return { _tag: "CCancel", s }
  if (r < 0.45) {
    // a quarter of the time the next price up (a small upgrade, whose credit's tax can exceed its charge's)
    const above = CPRICES.map((_, k) => k).filter((k) => cMinor(k) > cMinor(s.price))
    const nearest = above.reduce<number | undefined>(
      (a, k) => (a === undefined || cMinor(k) < cMinor(a) ? k : a),
      undefined
    )
    const target =
      rnd.next() < 0.25 && nearest !== undefined ? nearest : (s.price + rnd.int(1, CPRICES.length - 1)) % CPRICES.length
    const mode = rnd.pick(["immediate", "immediate", "immediate", "none", "end_of_period"] as const)
    return { _tag: "CChange", s, target, mode }
  }
  if (r < 0.6) {
    const d = rnd.pick(m.discounts)
    return s.terms.some((t) => t.d === d) ? { _tag: "CRemoveDiscount", s, d } : { _tag: "CApplyDiscount", s, d }
  }
  const paid = s.invoices.map((i, k) => [i, k] as const).filter(([i]) => cPaying(i) && i.refunded < i.amount)
  if (paid.length > 0) {
    const [inv, k] = rnd.pick(paid)
    const left = inv.amount - inv.refunded
    return { _tag: "CRefund", s, index: k, amount: rnd.next() < 0.4 ? left : BigInt(rnd.int(1, Number(left))) }
  }
  return { _tag: "CAdvance", m, ms: rnd.int(1, 48) * 3_600_000 }
}
