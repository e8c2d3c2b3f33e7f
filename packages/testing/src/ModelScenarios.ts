/**
 * The money path against a reference model. Random sequences — subscribe, price changes up and
 * down under each proration mode (immediate, none, end of period), policy (per second, per
 * day, fixed 30 days) and credit setting (refund, credit balance), quantity changes, cancel and
 * revoke, pause and resume, refunds, usage, clock moves — run on the engine and on a model
 * written here from the rules in docs/proration.md, with its own calendar and rounding. Every
 * invoice (type, cycle, amount, status) and every subscription (status, price, quantity, cycle,
 * period end, credit) must match to the minor unit, after every operation.
 *
 * The model also checks the cycle identity on its own numbers: for every cycle that ran to its
 * end in `refund` mode, what the customer paid less what came back equals Σ basis × time in
 * force, within ½ minor unit per line.
 *
 * The commercial layer (issue 29) runs beside it on two more merchants: discount codes
 * (percentage and fixed; once, repeating, forever; limited to a product or a customer), tax
 * rates (inclusive and exclusive) and customers moving between them, refunds, price changes
 * across products, declined renewals and their recovery, cancellations. Its model states the
 * intended rules of issue 29 (a discount ends outside its products; redemptions are durable; what
 * comes back carries the tax that was paid; never more back than collected) and, after every
 * operation, checks refunded + credited ≤ collected and tax back ≤ tax collected on the engine's
 * own documents, per subscription and per customer. Every operation runs as drawn; `avoid`, a
 * debugging knob, leaves out the operations meeting items 1–4 (see docs/reliability.md).
 *
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  Checkout,
  Customers,
  Discounts,
  Engine,
  type Invoice,
  Merchants,
  Metering,
  PaymentMethods,
  Ports,
  PriceChanges,
  Refunds,
  SandboxClock,
  Secrets,
  SessionPayments,
  Settings,
  type Store,
  type Subscription,
  Subscriptions,
  TaxRates
} from "@recur/core"
import { SandboxGateway } from "@recur/payment-sandbox"
import { DateTime, Effect, Layer } from "effect"
import * as ServicesContract from "./ServicesContract.js"
import * as WebhookRecorder from "./WebhookRecorder.js"

/** The whole engine with the sandbox gateway and the merchants' own tax rates (`TaxRates.table`). */
const commercialEngine = <E>(storage: Layer.Layer<Store.Storage, E>) =>
  Engine.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SandboxGateway.layer(),
        Ports.fxStatic({}),
        TaxRates.table(),
        Settings.layer(),
        WebhookRecorder.layer
      )
    ),
    Layer.provideMerge(Layer.mergeAll(storage, Secrets.layer(ServicesContract.testMasterKey)))
  )

// ------------------------------------------------------------------ the model's own arithmetic

const DAY = 86_400_000

/** A small seeded generator (mulberry32): the same seed replays the same sequence. */
const generator = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(next() * xs.length)]!
  return { next, int, pick }
}

/** Calendar months from an anchor, clamped to the month's last day, time of day kept. */
const addMonths = (anchor: number, months: number): number => {
  const d = new Date(anchor)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth() + months
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
  return Date.UTC(
    y,
    m,
    Math.min(d.getUTCDate(), last),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds()
  )
}

/** num / den to the nearest integer, ties to even (num ≥ 0, den > 0). */
const halfEven = (num: bigint, den: bigint): bigint => {
  const q = num / den
  const twice = 2n * (num % den)
  return twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q
}

type Policy = "per_second" | "per_day" | "fixed_days(30)"
type CreditMode = "refund" | "credit_balance"

/** The unused part of [start, end) at `at`, as [unused, total]. */
const unused = (policy: Policy, start: number, end: number, at: number): readonly [bigint, bigint] => {
  const c = Math.min(Math.max(at, start), end)
  const day = (ms: number) => Math.floor(ms / DAY)
  switch (policy) {
    case "per_second":
      return [BigInt(Math.floor((end - c) / 1000)), BigInt(Math.max(1, Math.floor((end - start) / 1000)))]
    case "per_day":
      return [BigInt(day(end) - day(c)), BigInt(Math.max(1, day(end) - day(start)))]
    case "fixed_days(30)":
      return [BigInt(Math.min(30, day(end) - day(c))), 30n]
  }
}

const fmt = (minor: bigint): string => {
  const sign = minor < 0n ? "-" : ""
  const abs = minor < 0n ? -minor : minor
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, "0")}`
}

/** Flat monthly prices (minor units) and per-unit usage prices (minor units per unit as num/den). */
const FLAT = ["10.00", "20.00", "30.00", "60.00", "99.99", "7.77"] as const
const USAGE = [
  ["0.25", 25n, 1n],
  ["0.10", 10n, 1n],
  ["0.125", 125n, 10n]
] as const
const flatMinor = (i: number) => BigInt(FLAT[i]!.replace(".", ""))

interface MInvoice {
  readonly type: "initial" | "renewal" | "upgrade" | "refund"
  readonly cycle: number
  readonly amount: bigint
  /** For a paying invoice: what was refunded of it. */
  refunded: bigint
  /** Customer credit applied to it (a renewal). */
  applied: bigint
  /** Credited to the balance from it (a downgrade, or what a refund of it could not take). */
  credited: bigint
  /** An upgrade's credit moved out of it, and (on the upgrade's invoice) into it. */
  movedOut: bigint
  movedIn: bigint
}

interface MSub {
  readonly id: string
  readonly merchant: MMerchant
  readonly usage: boolean
  status: "active" | "paused" | "canceled"
  price: number
  scheduled: number | null
  qty: bigint
  pending: bigint | null
  anchor: number
  anchorCycle: number
  cycle: number
  start: number
  end: number
  basis: bigint
  credit: bigint
  accrued: bigint
  cancelAtEnd: boolean
  readonly invoices: Array<MInvoice>
  /** Invoices compared with the engine's so far. */
  checked: number
  /** The current cycle's segments for the identity check; null once it cannot hold. */
  segments: Array<{ readonly basis: bigint; readonly at: number }> | null
  lines: number
}

interface MMerchant {
  readonly id: string
  readonly policy: Policy
  readonly creditMode: CreditMode
  readonly flat: ReadonlyArray<string>
  readonly usage: ReadonlyArray<string>
  now: number
  readonly subs: Array<MSub>
}

const paying = (i: MInvoice) => i.type !== "refund" && i.amount > 0n

const statusOf = (i: MInvoice): string =>
  !paying(i) ? "success" : i.refunded >= i.amount ? "refunded" : i.refunded > 0n ? "partially_refunded" : "success"

// ------------------------------------------------------------------ the model's rules

const fullOf = (s: MSub, price: number, qty: bigint) => (s.usage ? 0n : flatMinor(price) * qty)

const usageAmount = (price: number, units: bigint) => {
  const [, num, den] = USAGE[price]!
  return halfEven(units * num, den)
}

const issue = (s: MSub, type: MInvoice["type"], cycle: number, amount: bigint, applied = 0n) => {
  const inv: MInvoice = { type, cycle, amount, refunded: 0n, applied, credited: 0n, movedOut: 0n, movedIn: 0n }
  s.invoices.push(inv)
  return inv
}

// what a cycle collected and gave back (the engine's `Refunds.collectedBy`, without tax)
const collects = (i: MInvoice) => i.type !== "refund" && i.amount + i.applied > 0n
/** What a paid invoice still holds: its paid (and moved in) less refunds, credits, moved out. */
const roomOf = (i: MInvoice) => i.amount + i.applied + i.movedIn - i.refunded - i.credited - i.movedOut
/** The cycle's paid invoices, newest first (the order a give-back takes from them). */
const cycleOf = (s: MSub, cycle: number) => s.invoices.filter((i) => i.cycle === cycle && collects(i)).reverse()
/** What the cycle still holds: paid less refunded and credited. */
const heldOf = (s: MSub, cycle: number) =>
  cycleOf(s, cycle).reduce((a, i) => a + i.amount + i.applied - i.refunded - i.credited, 0n)
/** `amount` given back from the cycle's invoices, newest first, each no more than it holds. */
const sharesOf = (s: MSub, cycle: number, amount: bigint) => {
  const shares: Array<readonly [MInvoice, bigint]> = []
  let left = amount
  for (const i of cycleOf(s, cycle)) {
    if (left <= 0n) break
    const room = roomOf(i)
    const take = room < left ? room : left
    if (take <= 0n) continue
    shares.push([i, take])
    left -= take
  }
  return shares
}
/** How much a refund of invoice `i` may take: its cash, what its cycle and it still hold. */
const refundCap = (s: MSub, i: MInvoice) => {
  const cash = i.amount - i.refunded
  const held = heldOf(s, i.cycle)
  const room = roomOf(i)
  const cap = [cash, held, room].reduce((a, b) => (b < a ? b : a))
  return cap > 0n ? cap : 0n
}

/** The identity of a finished cycle: paid − refunded = Σ basis × time in force (± ½ per line). */
const closeCycle = (s: MSub) => {
  const seg = s.segments
  if (seg !== null && s.merchant.policy !== "fixed_days(30)" && s.merchant.creditMode === "refund" && !s.usage) {
    const net = s.invoices
      .filter((i) => i.cycle === s.cycle)
      .reduce((a, i) => (i.type === "refund" ? a - i.amount : a + i.amount), 0n)
    // Σ basis_k × (f(t_k) − f(t_k+1)), f the unused fraction, as one fraction over total
    const [, total] = unused(s.merchant.policy, s.start, s.end, s.start)
    let exact = 0n
    for (let k = 0; k < seg.length; k++) {
      const from = unused(s.merchant.policy, s.start, s.end, seg[k]!.at)[0]
      const to = k + 1 < seg.length ? unused(s.merchant.policy, s.start, s.end, seg[k + 1]!.at)[0] : 0n
      exact += seg[k]!.basis * (from - to)
    }
    // |net × total − exact| ≤ lines × total / 2
    const diff = net * total - exact
    expect(
      2n * (diff < 0n ? -diff : diff) <= BigInt(s.lines) * total,
      `cycle ${s.cycle} of ${s.id}: paid ${net} vs Σ basis × time ${exact}/${total}`
    ).toBe(true)
  }
}

const openCycle = (s: MSub, at: number) => {
  s.segments = s.usage ? null : [{ basis: s.basis, at }]
  s.lines = 1
}

/** Bills the next cycle at `at`: the period-end renewal, or a resume. */
const renewModel = (s: MSub, at: number, resumed: boolean) => {
  if (!resumed) closeCycle(s)
  if (s.cancelAtEnd) {
    s.status = "canceled"
    return
  }
  let amount: bigint
  if (s.usage) {
    amount = usageAmount(s.price, s.accrued)
    s.accrued = 0n
  }
  if (s.scheduled !== null) {
    s.price = s.scheduled
    s.scheduled = null
  }
  if (!s.usage) {
    if (s.pending !== null) s.qty = s.pending
    s.pending = null
    amount = fullOf(s, s.price, s.qty)
  }
  const applied = s.credit < amount! ? s.credit : amount!
  s.credit -= applied
  issue(s, "renewal", s.usage ? s.cycle : s.cycle + 1, amount! - applied, applied)
  s.cycle += 1
  if (resumed) {
    s.anchor = at
    s.anchorCycle = s.cycle
  }
  s.start = addMonths(s.anchor, s.cycle - s.anchorCycle)
  s.end = addMonths(s.anchor, s.cycle - s.anchorCycle + 1)
  s.basis = fullOf(s, s.price, s.qty)
  openCycle(s, s.start)
  if (applied > 0n && s.segments) s.segments = null
}

/** Renewals of a merchant's subscriptions up to `to`, in time order (as `advance_clock`). */
const advanceModel = (m: MMerchant, to: number) => {
  for (;;) {
    let due: MSub | undefined
    for (const s of m.subs) if (s.status === "active" && s.end <= to && (due === undefined || s.end < due.end)) due = s
    if (due === undefined) break
    renewModel(due, due.end, false)
  }
  m.now = to
}

/**
 * An immediate prorated change: the lines, and where a negative net goes. The credit is never
 * more than the cycle still holds; an upgrade's credit moves out of the invoices that paid the
 * old plan into the upgrade's; a downgrade gives back from them, newest first.
 */
const prorateModel = (s: MSub, target: number): bigint => {
  const [u, total] = unused(s.merchant.policy, s.start, s.end, s.merchant.now)
  const prorated = halfEven(s.basis * u, total)
  const held = heldOf(s, s.cycle)
  const credit = prorated < held ? prorated : held > 0n ? held : 0n
  const newFull = fullOf(s, target, s.qty)
  const charge = halfEven(newFull * u, total)
  const net = charge - credit
  s.price = target
  s.scheduled = null
  s.basis = newFull
  if (s.segments) {
    s.segments.push({ basis: newFull, at: s.merchant.now })
    s.lines += 2
    // a capped credit (money already given back) breaks the cycle's identity
    if (credit !== prorated) s.segments = null
  }
  if (net > 0n) {
    const shares = sharesOf(s, s.cycle, credit)
    const up = issue(s, "upgrade", s.cycle, net)
    for (const [i, take] of shares) {
      i.movedOut += take
      up.movedIn += take
    }
  } else if (net < 0n) {
    for (const [i, share] of sharesOf(s, s.cycle, -net)) {
      let left = share
      if (s.merchant.creditMode === "refund") {
        const cash = i.amount - i.refunded
        const take = cash < share ? cash : share
        if (take > 0n) {
          i.refunded += take
          issue(s, "refund", i.cycle, take)
          left -= take
        }
      } else if (s.segments) s.segments = null
      if (left > 0n) {
        i.credited += left
        s.credit += left
        if (s.segments && s.merchant.creditMode === "refund") s.segments = null
      }
    }
  }
  return net
}

// ------------------------------------------------------------------ the commercial layer

/** Tax rates the commercial merchants use, by country (percentage × 10⁴, inclusive). */
const RATES: Record<
  string,
  { readonly pct: string; readonly units: bigint; readonly inclusive: boolean; readonly region?: string }
> = {
  DE: { pct: "19", units: 190_000n, inclusive: true },
  GB: { pct: "20", units: 200_000n, inclusive: false },
  FR: { pct: "20", units: 200_000n, inclusive: false },
  US: { pct: "7.25", units: 72_500n, inclusive: false, region: "CA" }
}
const COUNTRIES = ["DE", "GB", "FR", "US", null] as const
type Country = (typeof COUNTRIES)[number]

/** The commercial catalogue: two products, prices of each (minor units). */
const CPRICES = [
  ["A", "30.00"],
  ["A", "60.00"],
  ["A", "99.99"],
  ["B", "20.00"],
  ["B", "45.50"],
  // within 20 % of B 45.50: an upgrade to it after a higher exclusive rate can give back more tax
  // than it charges (settled at 0.00, the rest to the balance)
  ["A", "50.00"]
] as const
const cMinor = (i: number) => BigInt(CPRICES[i]![1].replace(".", ""))
const productOf = (i: number) => CPRICES[i]![0]

/** The commercial discounts: percentage and fixed; once, repeating, forever; product-limited. */
const CDISCOUNTS = [
  { code: "HALFA", pct: 50, cycles: null, products: ["A"], perCustomer: null },
  { code: "TEN3", pct: 10, cycles: 3, products: [], perCustomer: null },
  { code: "FIVEONCE", amount: "5.00", cycles: 1, products: [], perCustomer: null },
  { code: "QUARTER", pct: 25, cycles: null, products: [], perCustomer: 1 },
  { code: "THREEB", amount: "3.00", cycles: null, products: ["B"], perCustomer: null }
] as const

/** amount × num / den, half away from zero (num, den ≥ 0): the rounding of tax. */
const halfUp = (num: bigint, den: bigint): bigint => (2n * num + den) / (2n * den)

interface CRate {
  readonly id: string
  readonly units: bigint
  readonly inclusive: boolean
}

/** The tax a rate puts on a taxable amount (nothing on zero or less). */
const taxOn = (taxable: bigint, rate: CRate | null): { readonly tax: bigint; readonly excl: bigint } => {
  if (rate === null || taxable <= 0n) return { tax: 0n, excl: 0n }
  const tax = rate.inclusive
    ? halfUp(taxable * rate.units, 1_000_000n + rate.units)
    : halfUp(taxable * rate.units, 1_000_000n)
  return { tax, excl: rate.inclusive ? 0n : tax }
}

interface CDiscount {
  readonly id: string
  readonly code: string
  readonly bp: bigint | null
  readonly amount: bigint | null
  readonly cycles: number | null
  readonly products: ReadonlyArray<string>
  readonly perCustomer: number | null
}

interface CCustomer {
  readonly id: string
  readonly payer: string
  country: Country
  /** Durable redemptions: discount id → count (removal does not erase them). */
  readonly redeemed: Map<string, number>
  readonly subs: Array<CSub>
}

interface CTerm {
  readonly d: CDiscount
  readonly first: number
}

/** One tax line: inclusive or not, and its amount (an upgrade's credit gives lines back, negative). */
interface CTaxLine {
  readonly inclusive: boolean
  readonly amount: bigint
}

interface CInvoice {
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

interface CSub {
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
  terms: Array<CTerm>
  readonly invoices: Array<CInvoice>
  checked: number
  /** A declined renewal: when it failed (its retry is a day later) and the invoice it left open. */
  pastDue: { readonly at: number; readonly invoice: CInvoice } | null
  /** The items of issue 29 whose known disagreement this subscription met (for the failure message). */
  readonly known: Set<number>
  status: "active" | "canceled"
}

interface CMerchant {
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

const cPaying = (i: CInvoice) => i.type !== "refund" && i.amount > 0n && i.paid
const rateOf = (c: CCustomer, m: CMerchant): CRate | null =>
  c.country === null ? null : (m.rates.get(c.country) ?? null)
/** Whether a redeemed term applies to cycle `cycle` of the price `price`. */
const applies = (t: CTerm, cycle: number, price: number) =>
  cycle >= t.first &&
  (t.d.cycles === null || cycle < t.first + t.d.cycles) &&
  (t.d.products.length === 0 || t.d.products.includes(productOf(price)))

/** (a): a term limited to products stops applying once the price moves outside them. */
const endOutOfScope = (s: CSub, price: number) => {
  s.terms = s.terms.filter((t) => t.d.products.length === 0 || t.d.products.includes(productOf(price)))
}

/** A whole period of `price` at cycle `cycle`, after the subscription's discounts, before tax. */
const discounted = (s: CSub, price: number, cycle: number): bigint => {
  const subtotal = cMinor(price) * s.qty
  let remaining = subtotal
  for (const t of s.terms) {
    if (!applies(t, cycle, price)) continue
    const wanted = t.d.bp !== null ? halfEven(subtotal * t.d.bp, 10_000n) : t.d.amount!
    remaining -= wanted > remaining ? remaining : wanted
  }
  return remaining
}

const sumOf = (lines: ReadonlyArray<CTaxLine>) => lines.reduce((a, l) => a + l.amount, 0n)
const exclOf = (lines: ReadonlyArray<CTaxLine>) => lines.reduce((a, l) => (l.inclusive ? a : a + l.amount), 0n)
/** The tax lines a rate puts on an amount (none on zero or less, or without a rate). */
const linesOn = (taxable: bigint, rate: CRate | null): Array<CTaxLine> =>
  rate === null || taxable <= 0n ? [] : [{ inclusive: rate.inclusive, amount: taxOn(taxable, rate).tax }]

// ------- what an invoice and a cycle hold (docs/proration.md "Never more back than was collected")

/** A paid invoice's ledger: what paid for it (its total, credit applied, credit moved in), and what came back of it. */
const paidOf = (i: CInvoice) => i.amount + i.applied + i.movedIn
const givenOf = (i: CInvoice) => i.refunded + i.creditedFrom + i.movedOut
/** The cycle's collected invoices, newest first (the order a give-back takes from them). */
const collectedIn = (s: CSub, cycle: number) =>
  s.invoices.filter((i) => i.cycle === cycle && i.type !== "refund" && i.paid).reverse()
/** A cycle's paid (totals and credit applied), the exclusive tax in it, and what it still holds. */
const cycleLedger = (s: CSub, cycle: number) => {
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
type CycleLedger = ReturnType<typeof cycleLedger>

/** What the cycle still holds in proration's terms (before exclusive tax), half-even. */
const heldNet = (c: CycleLedger) => (c.held <= 0n || c.paid <= 0n ? 0n : halfEven(c.held * (c.paid - c.excl), c.paid))

/**
 * The tax lines of giving back `amount` more of invoice `p`: each of its (positive) lines in
 * proportion to its paid, counted cumulatively over what came back of it before, half up.
 */
const taxBackOf = (p: CInvoice, amount: bigint): Array<CTaxLine> => {
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

interface CShare {
  readonly inv: CInvoice
  readonly amount: bigint
  readonly lines: ReadonlyArray<CTaxLine>
}

/**
 * `net` (proration's terms) given back of a cycle: grossed up by the exclusive tax the cycle
 * collected (half-even), never more than it holds, taken from its invoices newest first, each
 * share no more than that invoice holds and carrying that invoice's tax lines.
 */
const cSharesOf = (c: CycleLedger, net: bigint): Array<CShare> => {
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
const refundableOf = (s: CSub, p: CInvoice) => {
  const caps = [p.amount - p.refunded, paidOf(p) - givenOf(p), cycleLedger(s, p.cycle).held]
  const min = caps.reduce((a, b) => (b < a ? b : a))
  return min > 0n ? min : 0n
}

/** Collected (credit applied included), refunded, credited, tax collected and given back of a subscription. */
const ledger = (s: CSub) => {
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

const newInvoice = (
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

/** A cycle invoice (initial or renewal) at the customer's rate now, the balance applied after tax. */
const cycleInvoice = (s: CSub, type: "initial" | "renewal") => {
  const net = discounted(s, s.price, s.cycle)
  const lines = linesOn(net, rateOf(s.cust, s.m))
  const due = net + exclOf(lines)
  const applied = s.credit < due ? s.credit : due
  s.credit -= applied
  s.invoices.push(newInvoice(type, s.cycle, due - applied, lines, applied))
  s.basis = net
}

/** A credit note: `amount` refunded of `p`'s trade, carrying `lines` of tax. */
const refundDoc = (s: CSub, p: CInvoice, amount: bigint, lines: ReadonlyArray<CTaxLine>) => {
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
const refundOfInvoice = (s: CSub, p: CInvoice, amount: bigint) => refundDoc(s, p, amount, taxBackOf(p, amount))

/** The first dunning retry comes a day after the failure (`DunningPolicy` default: 1, 3, 5, 7 days). */
const RETRY_AFTER = DAY

const recover = (s: CSub) => {
  if (s.pastDue !== null) s.pastDue.invoice.paid = true
  s.pastDue = null
}

/** Renews; a renewal that is charged while a decline is armed fails and leaves the subscription past due. */
const cRenew = (s: CSub, decline: { armed: boolean }) => {
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
const cAdvance = (m: CMerchant, to: number, decline: { armed: boolean } = { armed: false }) => {
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

/**
 * The numbers of an immediate prorated change of `s` to `target`, without changing anything.
 *
 * The credit of the old plan is what was paid for it and is still held (never more than the
 * cycle's held basis); the charge is the new plan's remaining time after the discounts still in
 * scope. An upgrade's charge is taxed at the customer's rate now, its credit gives back the
 * shares of the cycle's invoices with their own tax (negative lines); a downgrade gives back the
 * net grossed up by the exclusive tax collected, in shares with their invoices' tax.
 */
const cPlan = (s: CSub, target: number) => {
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
const knownDisagreement = (op: COp): 0 | 1 | 2 | 3 | 4 => {
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
const settledToBalance = { n: 0 }

/**
 * An immediate prorated change (docs/proration.md, docs/taxes.md): answers the quote's net, tax
 * and total (what moves now, tax included: charged > 0, given back < 0).
 */
const cProrate = (s: CSub, target: number) => {
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

type COp =
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

const cNextOp = (rnd: ReturnType<typeof generator>, merchants: ReadonlyArray<CMerchant>, maxSubs: number): COp => {
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

// ------------------------------------------------------------------ the run

const card: Ports.CardInput = { number: "4242424242424242", exp_month: 12, exp_year: 2099, cvc: "123" }

type Op =
  | {
      readonly _tag: "Subscribe"
      readonly m: MMerchant
      readonly usage: boolean
      readonly price: number
      readonly qty: bigint
    }
  | { readonly _tag: "Advance"; readonly m: MMerchant; readonly ms: number }
  | {
      readonly _tag: "ChangePrice"
      readonly s: MSub
      readonly target: number
      readonly mode: "immediate" | "none" | "end_of_period"
    }
  | { readonly _tag: "ChangeQuantity"; readonly s: MSub; readonly qty: bigint }
  | { readonly _tag: "Cancel"; readonly s: MSub; readonly atEnd: boolean }
  | { readonly _tag: "RevokeCancel"; readonly s: MSub }
  | { readonly _tag: "Pause"; readonly s: MSub }
  | { readonly _tag: "Resume"; readonly s: MSub }
  | { readonly _tag: "Refund"; readonly s: MSub; readonly index: number; readonly amount: bigint }
  | { readonly _tag: "Usage"; readonly s: MSub; readonly units: number }

const describe = (op: Op | COp): string => {
  const { _tag, ...rest } = op as (Op | COp) & Record<string, unknown>
  const shown = Object.entries(rest).map(
    ([k, v]) => `${k}=${typeof v === "object" && v !== null && "id" in v ? (v as { id: string }).id : String(v)}`
  )
  return `${_tag}(${shown.join(", ")})`
}

/** The next operation: mostly valid ones, weighted towards what moves money. */
const nextOp = (rnd: ReturnType<typeof generator>, merchants: ReadonlyArray<MMerchant>, maxSubs: number): Op => {
  const m = rnd.pick(merchants)
  const live = m.subs.filter((s) => s.status !== "canceled")
  const roll = rnd.next()
  if (live.length === 0 || (roll < 0.1 && live.length < maxSubs)) {
    const usage = rnd.next() < 0.25
    return {
      _tag: "Subscribe",
      m,
      usage,
      price: rnd.int(0, (usage ? USAGE.length : FLAT.length) - 1),
      qty: usage ? 1n : BigInt(rnd.int(1, 5))
    }
  }
  if (roll < 0.28) {
    const r = rnd.next()
    const ms =
      r < 0.5
        ? rnd.int(1, 72) * 3_600_000
        : r < 0.85
          ? rnd.int(1, 12) * DAY + rnd.int(0, 86_399) * 1000
          : rnd.int(25, 70) * DAY
    return { _tag: "Advance", m, ms }
  }
  const s = rnd.pick(live)
  const r = rnd.next()
  if (s.status === "paused")
    return r < 0.8
      ? { _tag: "Resume", s }
      : r < 0.9
        ? { _tag: "Cancel", s, atEnd: false }
        : { _tag: "ChangePrice", s, target: (s.price + 1) % (s.usage ? USAGE.length : FLAT.length), mode: "immediate" }
  if (r < 0.5) {
    const family = s.usage ? USAGE.length : FLAT.length
    const target = (s.price + rnd.int(1, family - 1)) % family
    const mode = rnd.pick(["immediate", "immediate", "immediate", "none", "end_of_period"] as const)
    return { _tag: "ChangePrice", s, target, mode }
  }
  if (r < 0.6)
    return s.usage
      ? { _tag: "Usage", s, units: rnd.int(1, 5000) }
      : { _tag: "ChangeQuantity", s, qty: BigInt(rnd.int(1, 6)) }
  if (r < 0.7 && s.usage) return { _tag: "Usage", s, units: rnd.int(1, 100_000) }
  if (r < 0.8) {
    // never more than the invoice's trade, its cycle and it still hold
    const paid = s.invoices.map((i, k) => [i, k] as const).filter(([i]) => paying(i) && refundCap(s, i) > 0n)
    if (paid.length > 0) {
      const [inv, k] = rnd.pick(paid)
      const left = refundCap(s, inv)
      return { _tag: "Refund", s, index: k, amount: rnd.next() < 0.3 ? left : BigInt(rnd.int(1, Number(left))) }
    }
  }
  if (r < 0.86) return { _tag: "Cancel", s, atEnd: rnd.next() < 0.7 }
  if (r < 0.9) return { _tag: "RevokeCancel", s }
  if (r < 0.95 && !s.usage && !s.cancelAtEnd) return { _tag: "Pause", s }
  return { _tag: "Advance", m, ms: rnd.int(1, 48) * 3_600_000 }
}

const invoicesOfSub = (
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

const shape = (i: MInvoice) => [i.type, i.cycle, fmt(i.amount)] as const
const engineShape = (i: Invoice.Invoice) => [i.invoice_type, i.cycle_index, i.amount] as const

/**
 * Registers the model-based suite on a storage: `ops` operations from `seed` over six
 * merchants (3 policies × 2 credit settings).
 *
 * @since 0.1.0
 */
export const suite = <E>(
  name: string,
  storage: Layer.Layer<Store.Storage, E>,
  options: {
    readonly ops: number
    readonly seed: number
    readonly maxSubsPerMerchant?: number
    /** The share of operations on the commercial merchants (discounts, taxes, refunds); default ½. */
    readonly commercial?: number
    /**
     * Items of issue 29 (1 product scope, 2 per-customer limit, 3 tax given back, 4 more back than
     * collected) whose operations are left out, a debugging knob: an operation that would meet
     * one becomes a clock move instead. Empty (default): every operation as drawn, the model's
     * rules strict.
     */
    readonly avoid?: ReadonlyArray<number>
    /** Fail unless every kind of operation ran at least once (the default suite's bounded runs). */
    readonly everyOperation?: boolean
  }
) =>
  // live services: ids sort in creation order only on a moving clock (the merchants' clocks are frozen)
  layer(commercialEngine(storage), { timeout: "180 seconds", excludeTestServices: true })(
    `Model-based money: ${name}`,
    (it) => {
      it.effect(
        `${options.ops} random operations from seed ${options.seed} match the reference model to the minor unit`,
        () =>
          Effect.gen(function* () {
            const billing = yield* Billing.Billing
            const sessionPayments = yield* SessionPayments.SessionPayments
            const checkout = yield* Checkout.Checkout
            const sandboxClock = yield* SandboxClock.SandboxClock
            const paymentMethods = yield* PaymentMethods.PaymentMethods
            const subsService = yield* Subscriptions.Subscriptions
            const priceChanges = yield* PriceChanges.PriceChanges
            const refunds = yield* Refunds.Refunds
            const metering = yield* Metering.Metering
            const catalog = yield* Catalog.Catalog
            const merchantsService = yield* Merchants.Merchants
            const rnd = generator(options.seed)
            const maxSubs = options.maxSubsPerMerchant ?? 12
            const start = Date.UTC(2024, 0, 31, 9, 30)
            const merchants: Array<MMerchant> = []
            for (const policy of ["per_second", "per_day", "fixed_days(30)"] as const) {
              for (const creditMode of ["refund", "credit_balance"] as const) {
                const { merchant } = yield* merchantsService.create({
                  name: `Model ${policy} ${creditMode}`,
                  currency: "USD",
                  frozen_time: start,
                  proration_policy: policy,
                  proration_credit: creditMode
                })
                const product = yield* catalog.createProduct(merchant.merchant_id, { product_name: "Plan" })
                const flat = yield* Effect.forEach(FLAT, (base) =>
                  Effect.map(
                    catalog.createPrice(merchant.merchant_id, {
                      name: `Flat ${base}`,
                      product_id: product.product_id,
                      currency: "USD",
                      billing_type: "recurring",
                      price_type: "flat_price",
                      price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: base }
                    }),
                    (p) => p.id
                  )
                )
                const usage = yield* Effect.forEach(USAGE, ([unit]) =>
                  Effect.map(
                    catalog.createPrice(merchant.merchant_id, {
                      name: `Usage ${unit}`,
                      product_id: product.product_id,
                      currency: "USD",
                      billing_type: "recurring",
                      price_type: "based_on_usage",
                      model_type: "per_unit",
                      billing_threshold: "1",
                      usage_unit_price: unit,
                      payment_timing: "postpaid",
                      billing_dimension: "usage",
                      usage_amount: "1",
                      usage_unit: "call",
                      price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: "0" }
                    }),
                    (p) => p.id
                  )
                )
                merchants.push({ id: merchant.merchant_id, policy, creditMode, flat, usage, now: start, subs: [] })
              }
            }

            // ---------------------------------------------------------------- the commercial merchants
            const discountsService = yield* Discounts.Discounts
            const controls = yield* SandboxGateway.SandboxControls
            const taxRates = yield* TaxRates.TaxRates
            const customersService = yield* Customers.Customers
            const cMerchants: Array<CMerchant> = []
            for (const [policy, creditMode] of [
              ["per_second", "refund"],
              ["per_day", "credit_balance"]
            ] as const) {
              const { merchant } = yield* merchantsService.create({
                name: `Commercial ${policy} ${creditMode}`,
                currency: "USD",
                frozen_time: start,
                proration_policy: policy,
                proration_credit: creditMode
              })
              const mid = merchant.merchant_id
              const products: Record<string, string> = {}
              for (const p of ["A", "B"])
                products[p] = (yield* catalog.createProduct(mid, { product_name: `Product ${p}` })).product_id
              const prices = yield* Effect.forEach(CPRICES, ([p, base]) =>
                Effect.map(
                  catalog.createPrice(mid, {
                    name: `${p} ${base}`,
                    product_id: products[p]!,
                    currency: "USD",
                    billing_type: "recurring",
                    price_type: "flat_price",
                    price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: base }
                  }),
                  (x) => x.id
                )
              )
              const discounts = yield* Effect.forEach(CDISCOUNTS, (d) =>
                Effect.map(
                  discountsService.create(mid, {
                    name: d.code,
                    code: d.code,
                    ...("pct" in d
                      ? { discount_type: "percentage", percent_off: d.pct }
                      : { discount_type: "fixed_amount", amount_off: d.amount }),
                    duration: d.cycles === null ? "forever" : d.cycles === 1 ? "once" : "repeating",
                    ...(d.cycles !== null && d.cycles > 1 ? { duration_cycles: d.cycles } : {}),
                    product_ids: d.products.map((p) => products[p]!),
                    ...(d.perCustomer !== null ? { max_redemptions_per_customer: d.perCustomer } : {})
                  }),
                  (x): CDiscount => ({
                    id: x.discount_id,
                    code: d.code,
                    bp: "pct" in d ? BigInt(d.pct) * 100n : null,
                    amount: "amount" in d ? BigInt(d.amount.replace(".", "")) : null,
                    cycles: d.cycles,
                    products: d.products,
                    perCustomer: d.perCustomer
                  })
                )
              )
              const cm: CMerchant = {
                id: mid,
                policy,
                creditMode,
                prices,
                discounts,
                rates: new Map(),
                customers: [],
                subs: [],
                now: start
              }
              for (const country of ["DE", "GB", "US"]) {
                const r = RATES[country]!
                const rate = yield* taxRates.create(mid, {
                  name: "Tax",
                  percentage: r.pct,
                  country,
                  ...(r.region ? { region: r.region } : {}),
                  inclusive: r.inclusive
                })
                cm.rates.set(country, { id: rate.tax_rate_id, units: r.units, inclusive: r.inclusive })
              }
              for (let k = 0; k < 6; k++) {
                const country = COUNTRIES[k % COUNTRIES.length]!
                const payer = `cust-${k}`
                const c = yield* customersService.create(mid, {
                  payer_id: payer,
                  address:
                    country === null
                      ? {}
                      : { country, ...(RATES[country]!.region ? { province: RATES[country]!.region } : {}) }
                })
                cm.customers.push({ id: c.id, payer, country, redeemed: new Map(), subs: [] })
              }
              cMerchants.push(cm)
            }
            const commercialShare = options.commercial ?? 0.5

            const priceIdOf = (s: MSub, index: number) => (s.usage ? s.merchant.usage[index]! : s.merchant.flat[index]!)
            let events = 0
            const log: Array<string> = []
            const whereAll = () => `seed ${options.seed}, operation ${log.length}: ${log.slice(-8).join(" → ")}`
            const where = whereAll

            /** The engine's subscription and newest invoices against the model's. */
            const verify = (s: MSub) =>
              Effect.gen(function* () {
                const fresh = s.invoices.length - s.checked
                const got = yield* invoicesOfSub(billing, s.merchant.id, s.id, fresh + 1)
                const expected = s.invoices.slice(s.checked).map(shape)
                expect(got.slice(0, fresh).reverse().map(engineShape), where()).toEqual(expected)
                if (s.checked > 0)
                  expect(got[fresh] ? engineShape(got[fresh]) : undefined, where()).toEqual(
                    shape(s.invoices[s.checked - 1]!)
                  )
                else expect(got.length, where()).toBe(fresh)
                s.checked = s.invoices.length
                const sub: Subscription.Subscription = yield* billing.getSubscription(s.merchant.id, s.id)
                expect(
                  [
                    sub.status,
                    sub.price_id,
                    sub.quantity,
                    sub.credit_balance,
                    sub.cycle_index,
                    sub.cancel_at_period_end
                  ],
                  where()
                ).toEqual([s.status, priceIdOf(s, s.price), s.qty.toString(), fmt(s.credit), s.cycle, s.cancelAtEnd])
                if (s.status !== "canceled" && sub.current_period_end !== null)
                  expect(DateTime.toEpochMillis(sub.current_period_end), where()).toBe(s.end)
                // never more back than in: refunded + the balance still held ≤ the money collected
                // (the invoices, equal to the engine's above; a balance spent was collected again)
                const collected = s.invoices.filter((i) => i.type !== "refund").reduce((a, i) => a + i.amount, 0n)
                const refunded = s.invoices.filter((i) => i.type === "refund").reduce((a, i) => a + i.amount, 0n)
                expect(refunded + s.credit <= collected, `${where()}: ${refunded} + ${s.credit} > ${collected}`).toBe(
                  true
                )
              })

            /** Every invoice of every subscription, statuses included. */
            const verifyAll = Effect.forEach(
              merchants.flatMap((m) => m.subs),
              (s) =>
                Effect.gen(function* () {
                  const got = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
                  expect(
                    got.map((i) => [...engineShape(i), i.biz_status]),
                    where()
                  ).toEqual(s.invoices.map((i) => [...shape(i), statusOf(i)]))
                }),
              { discard: true }
            )

            const conflict = <A, E>(effect: Effect.Effect<A, E>) =>
              Effect.gen(function* () {
                const e = yield* Effect.flip(effect)
                expect(["SubscriptionActionRefused", "SubscriptionNotLive"], where()).toContain(
                  (e as { _tag?: string })._tag
                )
              })

            const cPriceId = (s: CSub, i: number) => s.m.prices[i]!
            const cShape = (i: CInvoice) => [i.type, i.cycle, fmt(i.amount), fmt(i.tax)] as const
            const cEngineShape = (i: Invoice.Invoice) =>
              [i.invoice_type, i.cycle_index, i.amount, i.tax_amount] as const
            const minor = (text: string) => {
              const neg = text.startsWith("-")
              const [w, f = ""] = (neg ? text.slice(1) : text).split(".")
              const v = BigInt(w!) * 100n + BigInt(f.padEnd(2, "0"))
              return neg ? -v : v
            }

            /**
             * The invariants of issue 29 on the engine's own documents: for the subscription and its
             * customer, refunded + credited ≤ collected and tax given back ≤ tax collected.
             */
            /** A subscription's collected, refunded, credited, tax collected and tax given back, from the engine's documents. */
            const settled = new Map<CSub, readonly [bigint, bigint, bigint, bigint, bigint]>()
            const engineLedger = (s: CSub) =>
              Effect.gen(function* () {
                const done = settled.get(s)
                if (done !== undefined) return done
                const got = yield* invoicesOfSub(billing, s.m.id, s.id, Number.MAX_SAFE_INTEGER)
                const sub = yield* billing.getSubscription(s.m.id, s.id)
                let [c, r, cr, ti, tb] = [0n, 0n, minor(sub.credit_balance), 0n, 0n]
                for (const i of got) {
                  if (i.invoice_type === "refund") {
                    r += minor(i.amount)
                    tb += minor(i.tax_amount)
                  } else {
                    // credit applied to it: what its lines and exclusive taxes come to less what was due
                    const due =
                      i.lines.reduce((a, l) => a + minor(l.amount), 0n) +
                      i.tax_lines.reduce((a, t) => (t.inclusive ? a : a + minor(t.amount)), 0n)
                    const applied = due > minor(i.amount) ? due - minor(i.amount) : 0n
                    cr += applied
                    if (i.biz_status !== "open" && i.biz_status !== "retrying" && i.biz_status !== "failed") {
                      // credit applied counts as collected (credit spent and given back again is counted again)
                      c += minor(i.amount) + applied
                      ti += minor(i.tax_amount)
                    }
                  }
                }
                const ledger = [c, r, cr, ti, tb] as const
                // a canceled subscription's documents no longer change
                if (s.status === "canceled") settled.set(s, ledger)
                return ledger
              })

            /**
             * The invariants of issue 29 on the engine's own documents: for every subscription and
             * for the customer, refunded + credited ≤ collected and tax given back ≤ tax collected.
             */
            const invariants = (subs: ReadonlyArray<CSub>, label: string) =>
              Effect.gen(function* () {
                let [collected, refunded, credited, taxIn, taxBack] = [0n, 0n, 0n, 0n, 0n]
                for (const s of subs) {
                  const [c, r, cr, ti, tb] = yield* engineLedger(s)
                  expect(
                    r + cr <= c,
                    `${whereAll()}: subscription ${s.id} refunded ${fmt(r)} + credited ${fmt(cr)} > collected ${fmt(c)}`
                  ).toBe(true)
                  expect(
                    tb <= ti,
                    `${whereAll()}: subscription ${s.id} tax back ${fmt(tb)} > tax collected ${fmt(ti)}`
                  ).toBe(true)
                  collected += c
                  refunded += r
                  credited += cr
                  taxIn += ti
                  taxBack += tb
                }
                expect(
                  refunded + credited <= collected,
                  `${whereAll()}: ${label}: refunded ${fmt(refunded)} + credited ${fmt(credited)} > collected ${fmt(collected)}`
                ).toBe(true)
                expect(
                  taxBack <= taxIn,
                  `${whereAll()}: ${label}: tax back ${fmt(taxBack)} > tax collected ${fmt(taxIn)}`
                ).toBe(true)
              })

            /** The engine's commercial subscription and newest invoices against the model's, then the invariants. */
            const cVerify = (s: CSub) =>
              Effect.gen(function* () {
                const where = () =>
                  `${whereAll()}\n  known disagreements met: items ${[...s.known].join(", ") || "none"}\n  model: price ${CPRICES[s.price]!.join(" ")} ×${s.qty}, cycle ${s.cycle}, basis ${fmt(s.basis)}, customer in ${s.cust.country}, terms ${s.terms.map((t) => `${t.d.code}@${t.first}`).join(",")}, credit ${fmt(s.credit)}, invoices ${s.invoices.map((i) => cShape(i).join(" ")).join(" | ")}`
                const fresh = s.invoices.length - s.checked
                const got = yield* invoicesOfSub(billing, s.m.id, s.id, fresh + 1)
                expect(got.slice(0, fresh).reverse().map(cEngineShape), where()).toEqual(
                  s.invoices.slice(s.checked).map(cShape)
                )
                if (s.checked === 0) expect(got.length, where()).toBe(fresh)
                // the trades the model's invoices were paid by (a refund names one)
                for (let k = 0; k < fresh; k++) s.invoices[s.checked + k]!.tradeId = got[fresh - 1 - k]!.trade_id
                s.checked = s.invoices.length
                const sub = yield* billing.getSubscription(s.m.id, s.id)
                expect([sub.status, sub.price_id, sub.quantity, sub.credit_balance, sub.cycle_index], where()).toEqual([
                  s.status === "canceled" ? "canceled" : s.pastDue !== null ? "past_due" : "active",
                  cPriceId(s, s.price),
                  s.qty.toString(),
                  fmt(s.credit),
                  s.cycle
                ])
                if (s.status !== "canceled" && sub.current_period_end !== null)
                  expect(DateTime.toEpochMillis(sub.current_period_end), where()).toBe(s.end)
                // the model's own ledger keeps the invariants too
                const l = ledger(s)
                expect(l.refunded + l.credited <= l.collected && l.taxBack <= l.taxIn, `${where()}: model ledger`).toBe(
                  true
                )
                yield* invariants(s.cust.subs, `customer ${s.cust.id}`)
              })

            const refusedAny = <A, E>(effect: Effect.Effect<A, E>) =>
              Effect.gen(function* () {
                const r = yield* Effect.result(effect)
                expect(r._tag, `${where()}: expected a refusal`).toBe("Failure")
              })

            const cRun = (op: COp) =>
              Effect.gen(function* () {
                switch (op._tag) {
                  case "CSubscribe": {
                    const { m, cust } = op
                    const d = op.code
                    const refused =
                      d !== null && d.perCustomer !== null && (cust.redeemed.get(d.id) ?? 0) >= d.perCustomer
                    const attempt = Effect.gen(function* () {
                      const session = yield* checkout.createSession(
                        m.id,
                        Checkout.sessionOf(
                          m.prices[op.price]!,
                          { payerId: cust.payer },
                          { quantity: BigInt(op.qty), discountCode: d?.code }
                        )
                      )
                      return yield* sessionPayments.paySession(m.id, session.session_id, card)
                    })
                    if (refused) {
                      yield* refusedAny(attempt)
                      break
                    }
                    const paid = yield* attempt
                    expect(paid.status, where()).toBe("succeeded")
                    const id = paid.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))
                    const s: CSub = {
                      id,
                      m,
                      cust,
                      price: op.price,
                      scheduled: null,
                      qty: op.qty,
                      cycle: 0,
                      anchor: m.now,
                      start: m.now,
                      end: addMonths(m.now, 1),
                      basis: 0n,
                      credit: 0n,
                      credited: 0n,
                      terms: d !== null ? [{ d, first: 0 }] : [],
                      invoices: [],
                      checked: 0,
                      pastDue: null,
                      known: new Set(),
                      status: "active"
                    }
                    if (d !== null) cust.redeemed.set(d.id, (cust.redeemed.get(d.id) ?? 0) + 1)
                    cycleInvoice(s, "initial")
                    m.subs.push(s)
                    cust.subs.push(s)
                    yield* cVerify(s)
                    break
                  }
                  case "CAdvance": {
                    const to = op.m.now + op.ms
                    yield* sandboxClock.advanceClock(op.m.id, to)
                    cAdvance(op.m, to)
                    yield* Effect.forEach(
                      op.m.subs.filter((s) => s.checked < s.invoices.length),
                      cVerify,
                      { discard: true }
                    )
                    break
                  }
                  case "CChange": {
                    const s = op.s
                    const input = {
                      priceId: cPriceId(s, op.target),
                      effective: op.mode === "end_of_period" ? ("end_of_period" as const) : ("immediate" as const),
                      proration: op.mode === "none" ? ("none" as const) : ("immediate" as const)
                    }
                    const preview = yield* priceChanges.previewChange(s.m.id, PriceChanges.change(s.id, input))
                    const quote = yield* priceChanges.changePrice(
                      s.m.id,
                      PriceChanges.change(s.id, { ...input, quoteId: preview.quote_id })
                    )
                    expect(quote, where()).toEqual(preview)
                    if (op.mode === "end_of_period") s.scheduled = op.target
                    else if (op.mode === "none") {
                      // the remainder stays paid at the old plan's rate: the basis is kept
                      s.price = op.target
                      s.scheduled = null
                      endOutOfScope(s, op.target)
                    } else {
                      const { net, tax, total } = cProrate(s, op.target)
                      expect([quote.net, quote.tax, quote.total], where()).toEqual([fmt(net), fmt(tax), fmt(total)])
                    }
                    yield* cVerify(s)
                    break
                  }
                  case "CApplyDiscount": {
                    const { s, d } = op
                    const outOfScope = d.products.length > 0 && !d.products.includes(productOf(s.price))
                    const limit = d.perCustomer !== null && (s.cust.redeemed.get(d.id) ?? 0) >= d.perCustomer
                    const apply = discountsService.applyToSubscription(s.m.id, s.id, { discount_id: d.id })
                    if (outOfScope || limit) {
                      yield* refusedAny(apply)
                      break
                    }
                    yield* apply
                    s.terms.push({ d, first: s.cycle + 1 })
                    s.cust.redeemed.set(d.id, (s.cust.redeemed.get(d.id) ?? 0) + 1)
                    const sub = yield* billing.getSubscription(s.m.id, s.id)
                    expect(sub.credit_balance, where()).toBe(fmt(s.credit))
                    break
                  }
                  case "CRemoveDiscount": {
                    const { s, d } = op
                    yield* discountsService.removeFromSubscription(s.m.id, s.id, d.id)
                    s.terms = s.terms.filter((t) => t.d !== d)
                    break
                  }
                  case "CMove": {
                    const { cust, country } = op
                    const m = cMerchants.find((x) => x.customers.includes(cust))!
                    yield* customersService.update(m.id, {
                      customer_id: cust.id,
                      address:
                        country === null
                          ? { country: "" }
                          : { country, ...(RATES[country]!.region ? { province: RATES[country]!.region } : {}) }
                    })
                    cust.country = country
                    break
                  }
                  case "CAddRate": {
                    const r = RATES[op.country]!
                    const rate = yield* taxRates.create(op.m.id, {
                      name: "Tax",
                      percentage: r.pct,
                      country: op.country,
                      ...(r.region ? { region: r.region } : {}),
                      inclusive: r.inclusive
                    })
                    op.m.rates.set(op.country, { id: rate.tax_rate_id, units: r.units, inclusive: r.inclusive })
                    break
                  }
                  case "CArchiveRate": {
                    yield* taxRates.archive(op.m.id, op.m.rates.get(op.country)!.id)
                    op.m.rates.delete(op.country)
                    break
                  }
                  case "CDecline": {
                    const { s } = op
                    const m = s.m
                    const to = s.end
                    yield* controls.declineNextOffSession(1)
                    yield* sandboxClock.advanceClock(m.id, to)
                    yield* controls.declineNextOffSession(0)
                    cAdvance(m, to, { armed: true })
                    yield* Effect.forEach(
                      m.subs.filter((x) => x.checked < x.invoices.length),
                      cVerify,
                      { discard: true }
                    )
                    break
                  }
                  case "CCancel": {
                    const { s } = op
                    yield* subsService.cancel(s.m.id, Subscriptions.cancelOf(s.id, { when: "immediate" }))
                    s.status = "canceled"
                    yield* cVerify(s)
                    break
                  }
                  case "CRecover": {
                    const { s } = op
                    yield* paymentMethods.updatePaymentMethod(s.m.id, s.id, card)
                    recover(s)
                    yield* cVerify(s)
                    break
                  }
                  case "CRefund": {
                    const s = op.s
                    const attempt = refunds.refund(
                      s.m.id,
                      Refunds.refundOf(s.invoices[op.index]!.tradeId!, { amount: fmt(op.amount), reason: "model" })
                    )
                    // (d): a refund above what its trade, its invoice or its cycle still holds is refused
                    if (op.amount > refundableOf(s, s.invoices[op.index]!)) {
                      const refused = yield* Effect.flip(attempt)
                      expect((refused as { _tag?: string })._tag, where()).toBe("RefundRefused")
                      break
                    }
                    const refund = yield* attempt
                    expect(refund.refund_status, where()).toBe("succeeded")
                    refundOfInvoice(s, s.invoices[op.index]!, op.amount)
                    yield* cVerify(s)
                    break
                  }
                }
              })

            const started = Date.now()
            const trace = process.env.RECUR_MODEL_TRACE !== undefined
            const ran = new Map<string, number>()
            // operations that met the situations of issue 29's items 1–4 (run strictly unless avoided)
            const met = new Map<number, number>()
            const balanceBefore = settledToBalance.n
            for (let n = 0; n < options.ops; n++) {
              // long runs say how far they are (stderr, every 10,000 operations)
              if (n > 0 && n % 10_000 === 0)
                process.stderr.write(
                  `model-based money (${name}): ${n} operations in ${Math.round((Date.now() - started) / 1000)} s\n`
                )
              if (rnd.next() < commercialShare) {
                const drawn = cNextOp(rnd, cMerchants, maxSubs)
                const op: COp = (options.avoid ?? []).includes(knownDisagreement(drawn))
                  ? {
                      _tag: "CAdvance",
                      m: "s" in drawn ? drawn.s.m : "m" in drawn ? drawn.m : cMerchants[0]!,
                      ms: 3_600_000
                    }
                  : drawn
                ran.set(op._tag, (ran.get(op._tag) ?? 0) + 1)
                const item = knownDisagreement(op)
                if (item > 0) {
                  met.set(item, (met.get(item) ?? 0) + 1)
                  if ("s" in op) op.s.known.add(item)
                }
                log.push(`${describe(op)}${item > 0 ? ` [issue 29 item ${item}]` : ""}`)
                yield* cRun(op)
                if (trace) {
                  const sub = "s" in op ? op.s : op._tag === "CSubscribe" ? op.m.subs.at(-1) : undefined
                  process.stderr.write(
                    `${n} ${describe(op)}${sub ? `\n    ${sub.id}: price ${CPRICES[sub.price]!.join(" ")} ×${sub.qty}, cycle ${sub.cycle}, basis ${fmt(sub.basis)}, customer in ${sub.cust.country}, terms ${sub.terms.map((t) => `${t.d.code}@${t.first}`).join(",")}, credit ${fmt(sub.credit)}, invoices ${sub.invoices.map((i) => cShape(i).join(" ")).join(" | ")}` : ""}\n`
                  )
                }
                continue
              }
              const op = nextOp(rnd, merchants, maxSubs)
              ran.set(op._tag, (ran.get(op._tag) ?? 0) + 1)
              log.push(describe(op))
              switch (op._tag) {
                case "Subscribe": {
                  const m = op.m
                  const priceId = op.usage ? m.usage[op.price]! : m.flat[op.price]!
                  const session = yield* checkout.createSession(
                    m.id,
                    Checkout.sessionOf(priceId, { payerId: `payer-${n}` }, { quantity: op.usage ? 1n : BigInt(op.qty) })
                  )
                  const paid = yield* sessionPayments.paySession(m.id, session.session_id, card)
                  expect(paid.status, where()).toBe("succeeded")
                  const id = paid.subscription.pipe((o) => (o._tag === "Some" ? o.value.id : ""))
                  const s: MSub = {
                    id,
                    merchant: m,
                    usage: op.usage,
                    status: "active",
                    price: op.price,
                    scheduled: null,
                    qty: op.qty,
                    pending: null,
                    anchor: m.now,
                    anchorCycle: 0,
                    cycle: 0,
                    start: m.now,
                    end: addMonths(m.now, 1),
                    basis: 0n,
                    credit: 0n,
                    accrued: 0n,
                    cancelAtEnd: false,
                    invoices: [],
                    checked: 0,
                    segments: null,
                    lines: 1
                  }
                  s.basis = fullOf(s, op.price, op.qty)
                  issue(s, "initial", 0, s.basis)
                  openCycle(s, s.start)
                  m.subs.push(s)
                  yield* verify(s)
                  break
                }
                case "Advance": {
                  const to = op.m.now + op.ms
                  yield* sandboxClock.advanceClock(op.m.id, to)
                  advanceModel(op.m, to)
                  yield* Effect.forEach(
                    op.m.subs.filter((s) => s.checked < s.invoices.length || s.status !== "canceled"),
                    verify,
                    { discard: true }
                  )
                  break
                }
                case "ChangePrice": {
                  const s = op.s
                  const input = {
                    priceId: priceIdOf(s, op.target),
                    effective: op.mode === "end_of_period" ? ("end_of_period" as const) : ("immediate" as const),
                    proration: op.mode === "none" ? ("none" as const) : ("immediate" as const)
                  }
                  if (s.status !== "active") {
                    yield* conflict(priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
                    break
                  }
                  const preview = yield* priceChanges.previewChange(s.merchant.id, PriceChanges.change(s.id, input))
                  const quote = yield* priceChanges.changePrice(
                    s.merchant.id,
                    PriceChanges.change(s.id, {
                      ...input,
                      quoteId: preview.quote_id
                    })
                  )
                  expect(quote, where()).toEqual(preview)
                  if (op.mode === "end_of_period") s.scheduled = op.target
                  else if (op.mode === "none") {
                    s.price = op.target
                    s.scheduled = null
                    s.segments = null
                  } else {
                    const net = prorateModel(s, op.target)
                    expect(quote.net, where()).toBe(fmt(net))
                  }
                  yield* verify(s)
                  break
                }
                case "ChangeQuantity": {
                  const s = op.s
                  if (s.status !== "active") {
                    yield* conflict(
                      priceChanges.changePrice(s.merchant.id, PriceChanges.change(s.id, { quantity: BigInt(op.qty) }))
                    )
                    break
                  }
                  yield* priceChanges.changePrice(
                    s.merchant.id,
                    PriceChanges.change(s.id, { quantity: BigInt(op.qty) })
                  )
                  s.pending = op.qty
                  const sub = yield* billing.getSubscription(s.merchant.id, s.id)
                  expect(sub.pending_change?.quantity, where()).toBe(op.qty.toString())
                  yield* verify(s)
                  break
                }
                case "Cancel": {
                  const s = op.s
                  if (op.atEnd) {
                    if (s.status !== "active") break
                    yield* subsService.cancel(s.merchant.id, Subscriptions.cancelOf(s.id, { when: "end_of_period" }))
                    s.cancelAtEnd = true
                  } else {
                    yield* subsService.cancel(s.merchant.id, Subscriptions.cancelOf(s.id, { when: "immediate" }))
                    s.status = "canceled"
                    s.segments = null
                  }
                  yield* verify(s)
                  break
                }
                case "RevokeCancel": {
                  const s = op.s
                  if (!s.cancelAtEnd) {
                    yield* conflict(subsService.revokeCancel(s.merchant.id, s.id))
                    break
                  }
                  yield* subsService.revokeCancel(s.merchant.id, s.id)
                  s.cancelAtEnd = false
                  yield* verify(s)
                  break
                }
                case "Pause": {
                  yield* subsService.pause(op.s.merchant.id, op.s.id)
                  op.s.status = "paused"
                  op.s.segments = null
                  yield* verify(op.s)
                  break
                }
                case "Resume": {
                  const s = op.s
                  yield* subsService.resume(s.merchant.id, s.id)
                  s.status = "active"
                  renewModel(s, s.merchant.now, true)
                  yield* verify(s)
                  break
                }
                case "Refund": {
                  const s = op.s
                  // the engine's k-th paying invoice is the model's k-th
                  const all = (yield* invoicesOfSub(billing, s.merchant.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
                  const target = all[op.index]!
                  expect(engineShape(target), where()).toEqual(shape(s.invoices[op.index]!))
                  const refund = yield* refunds.refund(
                    s.merchant.id,
                    Refunds.refundOf(target.trade_id!, { amount: fmt(op.amount), reason: "model" })
                  )
                  expect(refund.refund_status, where()).toBe("succeeded")
                  const inv = s.invoices[op.index]!
                  inv.refunded += op.amount
                  issue(s, "refund", inv.cycle, op.amount)
                  s.segments = inv.cycle === s.cycle ? null : s.segments
                  yield* verify(s)
                  break
                }
                case "Usage": {
                  const s = op.s
                  if (s.status !== "active") {
                    yield* conflict(
                      metering.recordUsage(s.merchant.id, Subscriptions.usageOf(s.id, op.units, { eventId: `u-${n}` }))
                    )
                    break
                  }
                  yield* metering.recordUsage(
                    s.merchant.id,
                    Subscriptions.usageOf(s.id, op.units, { eventId: `u-${n}` })
                  )
                  s.accrued += BigInt(op.units)
                  events++
                  break
                }
              }
            }
            yield* verifyAll
            // every commercial invoice (statuses too) and every customer's invariants
            const cStatus = (i: CInvoice, engine: string) =>
              i.type === "refund" || i.amount === 0n || !i.paid
                ? engine
                : i.refunded >= i.amount
                  ? "refunded"
                  : i.refunded > 0n
                    ? "partially_refunded"
                    : "success"
            for (const m of cMerchants) {
              for (const s of m.subs) {
                const got = (yield* invoicesOfSub(billing, m.id, s.id, Number.MAX_SAFE_INTEGER)).reverse()
                expect(
                  got.map((i) => [...cEngineShape(i), i.biz_status]),
                  whereAll()
                ).toEqual(s.invoices.map((i, k) => [...cShape(i), cStatus(i, got[k]?.biz_status ?? "")]))
              }
              for (const c of m.customers) yield* invariants(c.subs, `customer ${c.id}`)
            }
            const invoices =
              merchants.reduce((a, m) => a + m.subs.reduce((b, s) => b + s.invoices.length, 0), 0) +
              cMerchants.reduce((a, m) => a + m.subs.reduce((b, s) => b + s.invoices.length, 0), 0)
            const subscriptions =
              merchants.reduce((a, m) => a + m.subs.length, 0) + cMerchants.reduce((a, m) => a + m.subs.length, 0)
            const counts = [...ran.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k} ${v}`)
            console.log(
              `model-based money (${name}): ${options.ops} operations (${counts.join(", ")}), ${subscriptions} subscriptions, ${invoices} invoices, ${events} usage events, issue 29 items met ${[1, 2, 3, 4].map((k) => `${k}×${met.get(k) ?? 0}`).join(" ")}, ${settledToBalance.n - balanceBefore} upgrades settled to the balance — all equal to the model in ${Math.round((Date.now() - started) / 1000)} s`
            )
            if (options.everyOperation) {
              const kinds = [
                ...[
                  "Subscribe",
                  "Advance",
                  "ChangePrice",
                  "ChangeQuantity",
                  "Cancel",
                  "RevokeCancel",
                  "Pause",
                  "Resume"
                ],
                ...["Refund", "Usage", "CSubscribe", "CAdvance", "CChange", "CApplyDiscount", "CRemoveDiscount"],
                ...["CMove", "CAddRate", "CArchiveRate", "CRefund", "CDecline", "CRecover", "CCancel"]
              ]
              expect(
                kinds.filter((k) => !ran.has(k)),
                "operations that never ran"
              ).toEqual([])
            }
          }),
        (120 + options.ops / 10) * 1000
      )
    }
  )
