/**
 * The commercial layer of the reference model (issue 29): tax rates, discounts and customers,
 * each invoice's ledger (what paid for it and what came back), credit notes, renewals with
 * declines and dunning. Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { DAY, addMonths, halfEven, type Policy, type CreditMode } from "./Reference.js"

/** Tax rates the commercial merchants use, by country (percentage × 10⁴, inclusive). */
export const RATES: Record<
  string,
  { readonly pct: string; readonly units: bigint; readonly inclusive: boolean; readonly region?: string }
> = {
  DE: { pct: "19", units: 190_000n, inclusive: true },
  GB: { pct: "20", units: 200_000n, inclusive: false },
  FR: { pct: "20", units: 200_000n, inclusive: false },
  US: { pct: "7.25", units: 72_500n, inclusive: false, region: "CA" }
}
export const COUNTRIES = ["DE", "GB", "FR", "US", null] as const
export type Country = (typeof COUNTRIES)[number]

/** The commercial catalogue: two products, prices of each (minor units). */
export const CPRICES = [
  ["A", "30.00"],
  ["A", "60.00"],
  ["A", "99.99"],
  ["B", "20.00"],
  ["B", "45.50"],
  // within 20 % of B 45.50: an upgrade to it after a higher exclusive rate can give back more tax
  // than it charges (settled at 0.00, the rest to the balance)
  ["A", "50.00"]
] as const
export const cMinor = (i: number) => BigInt(CPRICES[i]![1].replace(".", ""))
export const productOf = (i: number) => CPRICES[i]![0]

/** The commercial discounts: percentage and fixed; once, repeating, forever; product-limited. */
export const CDISCOUNTS = [
  { code: "HALFA", pct: 50, cycles: null, products: ["A"], perCustomer: null },
  { code: "TEN3", pct: 10, cycles: 3, products: [], perCustomer: null },
  { code: "FIVEONCE", amount: "5.00", cycles: 1, products: [], perCustomer: null },
  { code: "QUARTER", pct: 25, cycles: null, products: [], perCustomer: 1 },
  { code: "THREEB", amount: "3.00", cycles: null, products: ["B"], perCustomer: null }
] as const

/** amount × num / den, half away from zero (num, den ≥ 0): the rounding of tax. */
export const halfUp = (num: bigint, den: bigint): bigint => (2n * num + den) / (2n * den)

export interface CRate {
  readonly id: string
  readonly units: bigint
  readonly inclusive: boolean
}

/** The tax a rate puts on a taxable amount (nothing on zero or less). */
export const taxOn = (taxable: bigint, rate: CRate | null): { readonly tax: bigint; readonly excl: bigint } => {
  if (rate === null || taxable <= 0n) return { tax: 0n, excl: 0n }
  const tax = rate.inclusive
    ? halfUp(taxable * rate.units, 1_000_000n + rate.units)
    : halfUp(taxable * rate.units, 1_000_000n)
  return { tax, excl: rate.inclusive ? 0n : tax }
}

export interface CDiscount {
  readonly id: string
  readonly code: string
  readonly bp: bigint | null
  readonly amount: bigint | null
  readonly cycles: number | null
  readonly products: ReadonlyArray<string>
  readonly perCustomer: number | null
}

export interface CCustomer {
  readonly id: string
  readonly payer: string
  country: Country
  /** Durable redemptions: discount id → count (removal does not erase them). */
  readonly redeemed: Map<string, number>
  readonly subs: Array<CSub>
}

export interface CTerm {
  readonly d: CDiscount
  readonly first: number
}

/** One tax line: inclusive or not, and its amount (an upgrade's credit gives lines back, negative). */
export interface CTaxLine {
  readonly inclusive: boolean
  readonly amount: bigint
}

export interface CInvoice {
  readonly type: "initial" | "renewal" | "upgrade" | "refund"
  readonly cycle: number
  readonly amount: bigint
  readonly tax: bigint
  readonly lines: ReadonlyArray<CTaxLine>
  /** Customer credit applied to it (paid as much as its amount). */
  readonly applied: bigint
  /** Refunded of its trade. */
  refunded: bigint
  /** Credited to the balance from it (a downgrade's share, what its trade could not take, an upgrade's excess). */
  creditedFrom: bigint
  /** An upgrade's credit moved out of it, and (on the upgrade's own invoice) into it. */
  movedOut: bigint
  movedIn: bigint
  /** Whether it was collected (false while a declined payment waits for its retry). */
  paid: boolean
  /** The engine's trade that paid it, once compared. */
  tradeId?: string | null
}

export interface CSub {
  readonly id: string
  readonly m: CMerchant
  readonly cust: CCustomer
  price: number
  scheduled: number | null
  readonly qty: bigint
  cycle: number
  readonly anchor: number
  start: number
  end: number
  /** What a whole period of the plan in force was bought for, before tax. */
  basis: bigint
  credit: bigint
  /** Everything credited to the balance so far (the invariant counts it). */
  credited: bigint
  /** Credit its renewals took from the customer's other subscriptions (SharedCredit): collected elsewhere. */
  sharedIn: bigint
  terms: Array<CTerm>
  readonly invoices: Array<CInvoice>
  checked: number
  /** A declined renewal: when it failed (its retry is a day later) and the invoice it left open. */
  pastDue: { readonly at: number; readonly invoice: CInvoice } | null
  /** The items of issue 29 whose known disagreement this subscription met (for the failure message). */
  readonly known: Set<number>
  status: "active" | "canceled"
}

export interface CMerchant {
  readonly id: string
  readonly policy: Policy
  readonly creditMode: CreditMode
  readonly prices: ReadonlyArray<string>
  readonly discounts: ReadonlyArray<CDiscount>
  /** The active rate of each country. */
  readonly rates: Map<string, CRate>
  readonly customers: Array<CCustomer>
  readonly subs: Array<CSub>
  now: number
}

export const cPaying = (i: CInvoice) => i.type !== "refund" && i.amount > 0n && i.paid
export const rateOf = (c: CCustomer, m: CMerchant): CRate | null =>
  c.country === null ? null : (m.rates.get(c.country) ?? null)
/** Whether a redeemed term applies to cycle `cycle` of the price `price`. */
export const applies = (t: CTerm, cycle: number, price: number) =>
  cycle >= t.first &&
  (t.d.cycles === null || cycle < t.first + t.d.cycles) &&
  (t.d.products.length === 0 || t.d.products.includes(productOf(price)))

/** (a): a term limited to products stops applying once the price moves outside them. */
export const endOutOfScope = (s: CSub, price: number) => {
  s.terms = s.terms.filter((t) => t.d.products.length === 0 || t.d.products.includes(productOf(price)))
}

/** A whole period of `price` at cycle `cycle`, after the subscription's discounts, before tax. */
export const discounted = (s: CSub, price: number, cycle: number): bigint => {
  const subtotal = cMinor(price) * s.qty
  let remaining = subtotal
  for (const t of s.terms) {
    if (!applies(t, cycle, price)) continue
    const wanted = t.d.bp !== null ? halfEven(subtotal * t.d.bp, 10_000n) : t.d.amount!
    remaining -= wanted > remaining ? remaining : wanted
  }
  return remaining
}

export const sumOf = (lines: ReadonlyArray<CTaxLine>) => lines.reduce((a, l) => a + l.amount, 0n)
export const exclOf = (lines: ReadonlyArray<CTaxLine>) => lines.reduce((a, l) => (l.inclusive ? a : a + l.amount), 0n)
/** The tax lines a rate puts on an amount (none on zero or less, or without a rate). */
export const linesOn = (taxable: bigint, rate: CRate | null): Array<CTaxLine> =>
  rate === null || taxable <= 0n ? [] : [{ inclusive: rate.inclusive, amount: taxOn(taxable, rate).tax }]

// ------- what an invoice and a cycle hold (docs/proration.md "Never more back than was collected")

/** A paid invoice's ledger: what paid for it (its total, credit applied, credit moved in), and what came back of it. */
export const paidOf = (i: CInvoice) => i.amount + i.applied + i.movedIn
export const givenOf = (i: CInvoice) => i.refunded + i.creditedFrom + i.movedOut
/** The cycle's collected invoices, newest first (the order a give-back takes from them). */
export const collectedIn = (s: CSub, cycle: number) =>
  s.invoices.filter((i) => i.cycle === cycle && i.type !== "refund" && i.paid).reverse()
/** A cycle's paid (totals and credit applied), the exclusive tax in it, and what it still holds. */
export const cycleLedger = (s: CSub, cycle: number) => {
  const invoices = collectedIn(s, cycle)
  let paid = 0n
  let excl = 0n
  let given = 0n
  for (const i of invoices) {
    paid += i.amount + i.applied
    excl += exclOf(i.lines)
    given += i.refunded + i.creditedFrom
  }
  return { invoices, paid, excl, held: paid - given }
}
export type CycleLedger = ReturnType<typeof cycleLedger>

/** What the cycle still holds in proration's terms (before exclusive tax), half-even. */
export const heldNet = (c: CycleLedger) =>
  c.held <= 0n || c.paid <= 0n ? 0n : halfEven(c.held * (c.paid - c.excl), c.paid)

/**
 * The tax lines of giving back `amount` more of invoice `p`: each of its (positive) lines in
 * proportion to its paid, counted cumulatively over what came back of it before, half up.
 */
export const taxBackOf = (p: CInvoice, amount: bigint): Array<CTaxLine> => {
  const paid = paidOf(p)
  if (paid <= 0n) return []
  const before = givenOf(p)
  return p.lines
    .filter((l) => l.amount > 0n)
    .map((l) => ({
      inclusive: l.inclusive,
      amount: halfUp(l.amount * (before + amount), paid) - halfUp(l.amount * before, paid)
    }))
}

export interface CShare {
  readonly inv: CInvoice
  readonly amount: bigint
  readonly lines: ReadonlyArray<CTaxLine>
}

/**
 * `net` (proration's terms) given back of a cycle: grossed up by the exclusive tax the cycle
 * collected (half-even), never more than it holds, taken from its invoices newest first, each
 * share no more than that invoice holds and carrying that invoice's tax lines.
 */
export const cSharesOf = (c: CycleLedger, net: bigint): Array<CShare> => {
  const base = c.paid - c.excl
  const gross = base > 0n && net > 0n ? halfEven(net * c.paid, base) : 0n
  let left = gross < c.held ? gross : c.held > 0n ? c.held : 0n
  const out: Array<CShare> = []
  for (const inv of c.invoices) {
    if (left <= 0n) break
    const room = paidOf(inv) - givenOf(inv)
    const take = room < left ? room : left
    if (take <= 0n) continue
    out.push({ inv, amount: take, lines: taxBackOf(inv, take) })
    left -= take
  }
  return out
}

/** The most a merchant's refund of `p` may take: what its trade, it and its cycle still hold. */
export const refundableOf = (s: CSub, p: CInvoice) => {
  const caps = [p.amount - p.refunded, paidOf(p) - givenOf(p), cycleLedger(s, p.cycle).held]
  const min = caps.reduce((a, b) => (b < a ? b : a))
  return min > 0n ? min : 0n
}

/** Collected (credit applied included), refunded, credited, tax collected and given back of a subscription. */
export const ledger = (s: CSub) => {
  let collected = 0n
  let refunded = 0n
  let taxIn = 0n
  let taxBack = 0n
  for (const i of s.invoices) {
    if (i.type === "refund") {
      refunded += i.amount
      taxBack += i.tax
    } else if (i.paid) {
      collected += i.amount + i.applied
      taxIn += i.tax
    }
  }
  return { collected, refunded, credited: s.credited, taxIn, taxBack }
}

export const newInvoice = (
  type: CInvoice["type"],
  cycle: number,
  amount: bigint,
  lines: ReadonlyArray<CTaxLine>,
  applied = 0n
): CInvoice => ({
  type,
  cycle,
  amount,
  tax: sumOf(lines),
  lines,
  applied,
  refunded: 0n,
  creditedFrom: 0n,
  movedOut: 0n,
  movedIn: 0n,
  paid: true
})

/**
 * The customer's balance is the customer's (issue 34, SharedCredit): of `wanted`, what the
 * customer's other subscriptions hold — their positive credit, largest first (ties by id), never
 * more than the balance beyond `s`'s own credit — moved to `s`. Answers the amount moved.
 */
export const pullShared = (s: CSub, wanted: bigint): bigint => {
  if (wanted <= 0n) return 0n
  const others = s.cust.subs.filter((o) => o !== s)
  const beyond = others.reduce((a, o) => a + o.credit, 0n)
  // one whose period does not strictly contain `s`'s renewal instant keeps its credit (ties: both keep)
  const holders = others
    .filter((o) => o.credit > 0n && (o.status === "canceled" || (o.start < s.start && o.end > s.start)))
    .sort((a, b) => (a.credit === b.credit ? (a.id < b.id ? -1 : 1) : a.credit > b.credit ? -1 : 1))
  const pool = holders.reduce((a, o) => a + o.credit, 0n)
  let left = [wanted, beyond, pool].reduce((a, b) => (a < b ? a : b))
  let moved = 0n
  for (const h of holders) {
    if (left <= 0n) break
    const part = h.credit < left ? h.credit : left
    h.credit -= part
    left -= part
    moved += part
  }
  return moved
}

/** A cycle invoice (initial or renewal) at the customer's rate now, the balance applied after tax. */
export const cycleInvoice = (s: CSub, type: "initial" | "renewal") => {
  const net = discounted(s, s.price, s.cycle)
  const lines = linesOn(net, rateOf(s.cust, s.m))
  const due = net + exclOf(lines)
  // a renewal still charging after its own credit takes the customer's other credit first
  if (type === "renewal") {
    const moved = pullShared(s, due - (s.credit < due ? s.credit : due))
    s.credit += moved
    s.sharedIn += moved
  }
  const applied = s.credit < due ? s.credit : due
  s.credit -= applied
  s.invoices.push(newInvoice(type, s.cycle, due - applied, lines, applied))
  s.basis = net
}

/** A credit note: `amount` refunded of `p`'s trade, carrying `lines` of tax. */
export const refundDoc = (s: CSub, p: CInvoice, amount: bigint, lines: ReadonlyArray<CTaxLine>) => {
  p.refunded += amount
  s.invoices.push(
    newInvoice(
      "refund",
      p.cycle,
      amount,
      lines.map((l) => ({ inclusive: true, amount: l.amount }))
    )
  )
}

/** A merchant's refund of `amount` of paying invoice `p`: its tax lines in proportion, on its ledger. */
export const refundOfInvoice = (s: CSub, p: CInvoice, amount: bigint) => refundDoc(s, p, amount, taxBackOf(p, amount))

/** The first dunning retry comes a day after the failure (`DunningPolicy` default: 1, 3, 5, 7 days). */
export const RETRY_AFTER = DAY

export const recover = (s: CSub) => {
  if (s.pastDue !== null) s.pastDue.invoice.paid = true
  s.pastDue = null
}

/** Renews; a renewal that is charged while a decline is armed fails and leaves the subscription past due. */
export const cRenew = (s: CSub, decline: { armed: boolean }) => {
  s.cycle += 1
  if (s.scheduled !== null) {
    s.price = s.scheduled
    s.scheduled = null
    endOutOfScope(s, s.price)
  }
  s.start = addMonths(s.anchor, s.cycle)
  s.end = addMonths(s.anchor, s.cycle + 1)
  cycleInvoice(s, "renewal")
  const inv = s.invoices.at(-1)!
  if (decline.armed && inv.amount > 0n) {
    decline.armed = false
    inv.paid = false
    s.pastDue = { at: s.start, invoice: inv }
  }
}

/** Renewals and dunning retries up to `to`, in time order (as `advance_clock`). */
export const cAdvance = (m: CMerchant, to: number, decline: { armed: boolean } = { armed: false }) => {
  for (;;) {
    let due: CSub | undefined
    let when = Number.POSITIVE_INFINITY
    for (const s of m.subs) {
      if (s.status === "canceled") continue
      const at = s.pastDue !== null ? s.pastDue.at + RETRY_AFTER : s.end
      if (at <= to && at < when) {
        due = s
        when = at
      }
    }
    if (due === undefined) break
    if (due.pastDue !== null) recover(due)
    else cRenew(due, decline)
  }
  m.now = to
}
