/**
 * The reference model of the money path, written from the rules in docs/proration.md with its own
 * calendar and rounding: a seeded generator, the model's merchants, subscriptions and invoices,
 * renewals, proration and the identity of a finished cycle. Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"

export const DAY = 86_400_000

/** A small seeded generator (mulberry32): the same seed replays the same sequence. */
export const generator = (seed: number) => {
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
export const addMonths = (anchor: number, months: number): number => {
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
export const halfEven = (num: bigint, den: bigint): bigint => {
  const q = num / den
  const twice = 2n * (num % den)
  return twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q
}

export type Policy = "per_second" | "per_day" | "fixed_days(30)"
export type CreditMode = "refund" | "credit_balance"

/** The unused part of [start, end) at `at`, as [unused, total]. */
export const unused = (policy: Policy, start: number, end: number, at: number): readonly [bigint, bigint] => {
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

export const fmt = (minor: bigint): string => {
  const sign = minor < 0n ? "-" : ""
  const abs = minor < 0n ? -minor : minor
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, "0")}`
}

/** Flat monthly prices (minor units) and per-unit usage prices (minor units per unit as num/den). */
export const FLAT = ["10.00", "20.00", "30.00", "60.00", "99.99", "7.77"] as const
export const USAGE = [
  ["0.25", 25n, 1n],
  ["0.10", 10n, 1n],
  ["0.125", 125n, 10n]
] as const
export const flatMinor = (i: number) => BigInt(FLAT[i]!.replace(".", ""))
/** The add-on a flat subscription may carry as a second item (issue 33): per unit, monthly. */
export const ADDON = "4.99"
export const addonMinor = BigInt(ADDON.replace(".", ""))
/** The one yearly flat price of each plain merchant (interval switches, issue 33). */
export const YEARLY = "120.00"

export interface MInvoice {
  /**
   * `credit_note`: a credit note of a paid invoice to the customer's balance (issue 34) — the
   * engine's document is a `refund` invoice without a trade; no money moves.
   */
  readonly type: "initial" | "renewal" | "upgrade" | "refund" | "credit_note"
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
  /**
   * A renewal of a merchant with a grace period (issue 34, 1): a draft until this instant, when
   * the worker finalises it (numbered, charged); unset once final. A draft collects nothing yet.
   */
  draftUntil?: number | undefined
  /** A draft voided by the merchant: the cycle billed nothing, the credit it applied returned. */
  voided?: boolean
  /**
   * On a renewal the period end issued: the net of the pending proration lines it billed (0 when
   * none) — the engine's invoice must carry exactly these lines, so each is billed once.
   */
  pendingBilled?: bigint
}

export interface MSub {
  readonly id: string
  readonly merchant: MMerchant
  readonly usage: boolean
  status: "active" | "paused" | "canceled"
  price: number
  scheduled: number | null
  /**
   * A schedule of one or two phases from cycle `start` (each price `price` × `qty` for cycles
   * `start`..`end`), to cycle `end`: released there (the last phase kept), or canceled (`cancel`).
   */
  schedule?: {
    readonly start: number
    readonly end: number
    readonly phases: ReadonlyArray<{
      readonly start: number
      readonly end: number
      readonly price: number
      readonly qty: bigint
    }>
    readonly cancel: boolean
  } | null
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
  /** What its second item (the add-on × its quantity) bills a cycle; 0 without one. */
  addon: bigint
  /**
   * An item set waiting for the next cycle (an item change with `proration: next_cycle`): the
   * base item's quantity and what the add-on bills a cycle then (0: no add-on).
   */
  pendingItems?: { readonly qty: bigint; readonly addon: bigint } | null
  /**
   * Pending proration lines of `create_prorations` changes (issue 33): signed amounts, a credit's
   * part taken from the cycle's payments in `fromPaid`. Billed once by the next renewal.
   */
  prorations: Array<{ readonly cycle: number; readonly amount: bigint; readonly fromPaid: bigint }>
  /** Months a cycle lasts: 1, or 12 after a switch to the yearly price (issue 33). */
  months: number
  /**
   * Manual balance adjustments on its customer, net (issue 34): credits given without money,
   * so the balance may hold them beside what was collected.
   */
  granted: bigint
}

export interface MMerchant {
  readonly id: string
  readonly policy: Policy
  readonly creditMode: CreditMode
  readonly flat: ReadonlyArray<string>
  readonly usage: ReadonlyArray<string>
  /** The add-on price ({@link ADDON}). */
  readonly addon: string
  readonly yearly: string
  /** Its renewals' grace period as drafts (ms; `invoice_draft_grace_seconds`), 0: none. */
  readonly grace: number
  now: number
  readonly subs: Array<MSub>
}

/** A document that gives back (a refund, a credit note): no charge of its own. */
export const givesBack = (i: MInvoice) => i.type === "refund" || i.type === "credit_note"

/** A draft not yet finalised, or a voided one: nothing collected by it. */
export const unbilled = (i: MInvoice) => i.draftUntil !== undefined || i.voided === true

export const paying = (i: MInvoice) => !givesBack(i) && !unbilled(i) && i.amount > 0n

export const statusOf = (i: MInvoice): string =>
  i.voided === true
    ? "void"
    : i.draftUntil !== undefined
      ? "draft"
      : !paying(i)
        ? "success"
        : i.refunded >= i.amount
          ? "refunded"
          : i.refunded > 0n
            ? "partially_refunded"
            : "success"

/** A whole cycle of the subscription: its base item at `price` × `qty` (the yearly price after a switch), and its add-on item. */
export const fullOf = (s: MSub, price: number, qty: bigint) =>
  s.usage ? 0n : (s.months === 12 ? BigInt(YEARLY.replace(".", "")) : flatMinor(price)) * qty + s.addon

export const usageAmount = (price: number, units: bigint) => {
  const [, num, den] = USAGE[price]!
  return halfEven(units * num, den)
}

export const issue = (s: MSub, type: MInvoice["type"], cycle: number, amount: bigint, applied = 0n) => {
  const inv: MInvoice = { type, cycle, amount, refunded: 0n, applied, credited: 0n, movedOut: 0n, movedIn: 0n }
  s.invoices.push(inv)
  return inv
}

// what a cycle collected and gave back (the engine's `CycleLedger.collectedBy`, without tax)
export const collects = (i: MInvoice) => !givesBack(i) && !unbilled(i) && i.amount + i.applied > 0n
/** What a paid invoice still holds: its paid (and moved in) less refunds, credits, moved out. */
export const roomOf = (i: MInvoice) => i.amount + i.applied + i.movedIn - i.refunded - i.credited - i.movedOut
/** The cycle's paid invoices, newest first (the order a give-back takes from them). */
export const cycleOf = (s: MSub, cycle: number) => s.invoices.filter((i) => i.cycle === cycle && collects(i)).reverse()
/** What the cycle still holds: paid less refunded and credited. */
export const heldOf = (s: MSub, cycle: number) =>
  cycleOf(s, cycle).reduce((a, i) => a + i.amount + i.applied - i.refunded - i.credited, 0n)
/** `amount` given back from the cycle's invoices, newest first, each no more than it holds. */
export const sharesOf = (s: MSub, cycle: number, amount: bigint) => {
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
export const refundCap = (s: MSub, i: MInvoice) => {
  const cash = i.amount - i.refunded
  const held = heldOf(s, i.cycle)
  const room = roomOf(i)
  const cap = [cash, held, room].reduce((a, b) => (b < a ? b : a))
  return cap > 0n ? cap : 0n
}

/**
 * How much a credit note to the balance of invoice `i` may take (issue 34): what it and its cycle
 * still hold after refunds, credits and moves (`InvoiceCredits.create`), its applied credit
 * included.
 */
export const creditCap = (s: MSub, i: MInvoice) => {
  const held = heldOf(s, i.cycle)
  const room = roomOf(i)
  const cap = room < held ? room : held
  return cap > 0n ? cap : 0n
}

/** The identity of a finished cycle: paid − refunded = Σ basis × time in force (± ½ per line). */
export const closeCycle = (s: MSub) => {
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

/**
 * Whether the subscription is in the short first period before its billing anchor (issue 33, 5):
 * cycle 0 of a subscription whose periods start on the anchor from cycle 1.
 */
export const inStub = (s: MSub) => s.cycle < s.anchorCycle

/**
 * The span a change prorates over: the current period, or in the short first period the whole
 * period that ends at the anchor (`BillingAnchor.prorationSpan`).
 */
export const spanOf = (s: MSub): { readonly start: number; readonly end: number } =>
  inStub(s) ? { start: addMonths(s.anchor, -1), end: s.anchor } : { start: s.start, end: s.end }

/**
 * The first invoice of a subscription anchored at `anchor` from `at`: the share of a whole period
 * (the one ending at the anchor) its short first period covers, under the merchant's policy.
 */
export const stubShare = (policy: Policy, full: bigint, anchor: number, at: number): bigint => {
  const [u, total] = unused(policy, addMonths(anchor, -1), anchor, at)
  return halfEven(full * u, total)
}

export const openCycle = (s: MSub, at: number) => {
  s.segments = s.usage ? null : [{ basis: s.basis, at }]
  s.lines = 1
}

/** Bills the next cycle at `at`: the period-end renewal, or a resume. */
export const renewModel = (s: MSub, at: number, resumed: boolean) => {
  if (!resumed) closeCycle(s)
  // a schedule's phase starting with the next cycle is its price and quantity; after its last
  // phase, released (the subscription keeps it) or canceled (it ends at this renewal, its usage
  // alone billed)
  const sc = s.schedule ?? null
  const scheduleEnds = sc !== null && !resumed && s.cycle + 1 >= sc.end
  if (s.cancelAtEnd || (scheduleEnds && sc.cancel)) {
    s.status = "canceled"
    s.schedule = null
    s.pendingItems = null
    endPending(s)
    // the last period's usage, which no renewal bills: on a final invoice
    cancelPending(s)
    return
  }
  // an item set waiting for this cycle (next_cycle) is its items
  const items = s.pendingItems ?? null
  if (items !== null) {
    s.qty = items.qty
    s.addon = items.addon
    s.pendingItems = null
  }
  if (sc !== null && !resumed) {
    const phase = sc.phases.find((p) => p.start === s.cycle + 1)
    if (scheduleEnds) s.schedule = null
    else if (phase !== undefined) {
      s.scheduled = phase.price === s.price ? null : phase.price
      if (!s.usage) s.pending = phase.qty === s.qty ? null : phase.qty
    }
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
  // the pending proration lines join the invoice; a credit it cannot absorb goes to the balance
  const withLines = amount! + s.prorations.reduce((a, p) => a + p.amount, 0n)
  const due = withLines > 0n ? withLines : 0n
  // the previous cycle's prorations paid here: this cycle's identity cannot hold
  const billedPending = s.prorations.length > 0
  const pendingBilled = withLines - amount!
  s.prorations = []
  const applied = s.credit < due ? s.credit : due
  s.credit -= applied
  if (withLines < 0n) s.credit += -withLines
  const inv = issue(s, "renewal", s.usage ? s.cycle : s.cycle + 1, due - applied, applied)
  inv.pendingBilled = pendingBilled
  // a renewal of a merchant with a grace period (at the period's end, or a resume's) waits as a draft
  if (s.merchant.grace > 0) inv.draftUntil = at + s.merchant.grace
  s.cycle += 1
  if (resumed) {
    s.anchor = at
    s.anchorCycle = s.cycle
  }
  s.start = addMonths(s.anchor, (s.cycle - s.anchorCycle) * s.months)
  s.end = addMonths(s.anchor, (s.cycle - s.anchorCycle + 1) * s.months)
  s.basis = fullOf(s, s.price, s.qty)
  openCycle(s, s.start)
  if ((applied > 0n || billedPending) && s.segments) s.segments = null
}

/** Renewals of a merchant's subscriptions up to `to`, in time order (as `advance_clock`). */
export const advanceModel = (m: MMerchant, to: number) => {
  for (;;) {
    let due: MSub | undefined
    for (const s of m.subs) if (s.status === "active" && s.end <= to && (due === undefined || s.end < due.end)) due = s
    if (due === undefined) break
    renewModel(due, due.end, false)
  }
  // the drafts whose grace period ended: finalised by the worker, their amounts unchanged
  for (const s of m.subs)
    for (const i of s.invoices) if (i.draftUntil !== undefined && i.draftUntil <= to) i.draftUntil = undefined
  m.now = to
}

/** A prorated change's quote: its credit (as capped), its charge and their net. */
export interface Terms {
  readonly credit: bigint
  readonly charge: bigint
  readonly net: bigint
}

/**
 * An immediate prorated change to `target` (the plan after it costing `newFull` a cycle): the
 * lines, and where a negative net goes. The credit is never more than the cycle still holds; an
 * upgrade's credit moves out of the invoices that paid the old plan into the upgrade's; a
 * downgrade gives back from them, newest first.
 */
export const prorateModel = (s: MSub, target: number, newFull = fullOf(s, target, s.qty)): Terms => {
  const [u, total] = unused(s.merchant.policy, spanOf(s).start, spanOf(s).end, s.merchant.now)
  const prorated = halfEven(s.basis * u, total)
  const held = heldOf(s, s.cycle)
  const credit = prorated < held ? prorated : held > 0n ? held : 0n
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
  return { credit, charge, net }
}

/**
 * A subscription that ends before its next invoice: pending charges are never billed, what the
 * pending credits exceed them by goes to the balance (docs/proration.md).
 */
export const endPending = (s: MSub) => {
  const net = s.prorations.reduce((a, p) => a + p.amount, 0n)
  if (net < 0n) s.credit += -net
  s.prorations = []
}

/**
 * A subscription canceled now with pending lines or usage recorded in its period: billed on a
 * final `upgrade` invoice of the cycle, as Stripe's cancel with `invoice_now` — the usage so far
 * at the price in force, a net charge collected (the balance applied first), a net credit to the
 * balance (docs/proration.md, docs/pricing.md).
 */
export const cancelPending = (s: MSub) => {
  const usage = s.usage && s.accrued > 0n
  if (s.prorations.length === 0 && !usage) return
  const net = s.prorations.reduce((a, p) => a + p.amount, 0n) + (usage ? usageAmount(s.price, s.accrued) : 0n)
  const applied = net > 0n && s.credit > 0n ? (s.credit < net ? s.credit : net) : 0n
  s.credit += net > 0n ? -applied : -net
  issue(s, "upgrade", s.cycle, net > 0n ? net - applied : 0n, applied)
  s.prorations = []
  s.accrued = 0n
}

/** Whether the current cycle has pending proration lines (an invoiced change is then refused). */
export const hasPending = (s: MSub) => s.prorations.some((p) => p.cycle === s.cycle)

/**
 * A `create_prorations` change: the credit cancels the cycle's pending charges first, then takes
 * from what the cycle's invoices still hold (credited against them now); both lines wait for the
 * next renewal. Answers the quote's terms.
 */
export const pendingModel = (s: MSub, target: number, newFull = fullOf(s, target, s.qty)): Terms => {
  const [u, total] = unused(s.merchant.policy, spanOf(s).start, spanOf(s).end, s.merchant.now)
  const prorated = halfEven(s.basis * u, total)
  let available = 0n
  for (const p of s.prorations) {
    if (p.cycle !== s.cycle) continue
    available += p.amount > 0n ? p.amount : p.amount + p.fromPaid
  }
  if (available < 0n) available = 0n
  const held = heldOf(s, s.cycle) + available
  const credit = prorated < held ? prorated : held > 0n ? held : 0n
  const charge = halfEven(newFull * u, total)
  const fromPaid = credit > available ? credit - available : 0n
  for (const [i, share] of sharesOf(s, s.cycle, fromPaid)) i.credited += share
  if (credit !== 0n) s.prorations.push({ cycle: s.cycle, amount: -credit, fromPaid })
  if (charge !== 0n) s.prorations.push({ cycle: s.cycle, amount: charge, fromPaid: 0n })
  s.price = target
  s.scheduled = null
  s.basis = newFull
  s.segments = null
  return { credit, charge, net: charge - credit }
}

/**
 * An interval switch now (monthly ↔ the yearly price; to monthly price `target`): the unused
 * time credited to the balance from the cycle's invoices (none under `proration=none`), the next
 * cycle opened from now, its invoice issued with the balance applied (docs/proration.md).
 */
export const switchModel = (s: MSub, target: number, mode: "always_invoice" | "create_prorations" | "none") => {
  const now = s.merchant.now
  let credit = 0n
  if (mode !== "none") {
    const [u, total] = unused(s.merchant.policy, s.start, s.end, now)
    const prorated = halfEven(s.basis * u, total)
    const held = heldOf(s, s.cycle)
    credit = prorated < held ? prorated : held > 0n ? held : 0n
  }
  const shares = [...sharesOf(s, s.cycle, credit)]
  const before = s.credit
  s.credit += credit
  s.months = s.months === 12 ? 1 : 12
  if (s.months === 1) s.price = target
  if (s.pending !== null) s.qty = s.pending
  s.pending = null
  s.scheduled = null
  s.cycle += 1
  s.anchor = now
  s.anchorCycle = s.cycle
  s.start = now
  s.end = addMonths(now, s.months)
  const amount = fullOf(s, s.price, s.qty)
  const applied = s.credit < amount ? s.credit : amount
  s.credit -= applied
  issue(s, "renewal", s.cycle, amount - applied, applied)
  // under `refund`, the credit the invoice does not take (after any debit) goes back to the card,
  // from the cycle's invoices newest first; what no payment can take stays on the balance
  const debt = before < 0n ? -before : 0n
  const over = s.merchant.creditMode === "refund" ? credit - amount - debt : 0n
  const refund = over > 0n ? over : 0n
  let left = refund
  for (const [i, share] of shares) {
    const take = left < share ? left : share
    left -= take
    const cash = i.amount - i.refunded
    const paid = cash < take ? cash : take
    if (paid > 0n) {
      i.refunded += paid
      issue(s, "refund", i.cycle, paid)
    }
    i.credited += share - paid
    s.credit -= paid
  }
  s.basis = amount
  openCycle(s, now)
  s.segments = null
  return refund
}
