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
 * @since 0.1.0
 */
import { expect, layer } from "@effect/vitest"
import {
  Billing,
  Catalog,
  type Invoice,
  Merchants,
  type Ports,
  PriceChanges,
  Refunds,
  type Store,
  type Subscription,
  Subscriptions
} from "@recur/core"
import { DateTime, Effect, type Layer } from "effect"
import { engine } from "./EngineScenarios.js"

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

const describe = (op: Op): string => {
  const { _tag, ...rest } = op as Op & Record<string, unknown>
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
  options: { readonly ops: number; readonly seed: number; readonly maxSubsPerMerchant?: number }
) =>
  // live services: ids sort in creation order only on a moving clock (the merchants' clocks are frozen)
  layer(engine(storage), { timeout: "180 seconds", excludeTestServices: true })(`Model-based money: ${name}`, (it) => {
    it.effect(
      `${options.ops} random operations from seed ${options.seed} match the reference model to the minor unit`,
      () =>
        Effect.gen(function* () {
          const billing = yield* Billing.Billing
          const subsService = yield* Subscriptions.Subscriptions
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

          const priceIdOf = (s: MSub, index: number) => (s.usage ? s.merchant.usage[index]! : s.merchant.flat[index]!)
          let events = 0
          const log: Array<string> = []
          const where = () => `seed ${options.seed}, operation ${log.length}: ${log.slice(-8).join(" → ")}`

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
                [sub.status, sub.price_id, sub.quantity, sub.credit_balance, sub.cycle_index, sub.cancel_at_period_end],
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

          const started = Date.now()
          for (let n = 0; n < options.ops; n++) {
            // long runs say how far they are (stderr, every 10,000 operations)
            if (n > 0 && n % 10_000 === 0)
              process.stderr.write(
                `model-based money (${name}): ${n} operations in ${Math.round((Date.now() - started) / 1000)} s\n`
              )
            const op = nextOp(rnd, merchants, maxSubs)
            log.push(describe(op))
            switch (op._tag) {
              case "Subscribe": {
                const m = op.m
                const priceId = op.usage ? m.usage[op.price]! : m.flat[op.price]!
                const session = yield* billing.createSession(m.id, {
                  payer_id: `payer-${n}`,
                  line_items: [{ price_id: priceId, ...(op.usage ? {} : { quantity: op.qty.toString() }) }]
                })
                const paid = yield* billing.paySession(m.id, session.session_id, card)
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
                yield* billing.advanceClock(op.m.id, to)
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
                  yield* conflict(subsService.changePrice(s.merchant.id, PriceChanges.change(s.id, input)))
                  break
                }
                const preview = yield* subsService.previewChange(s.merchant.id, PriceChanges.change(s.id, input))
                const quote = yield* subsService.changePrice(
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
                    subsService.changePrice(s.merchant.id, PriceChanges.change(s.id, { quantity: BigInt(op.qty) }))
                  )
                  break
                }
                yield* subsService.changePrice(s.merchant.id, PriceChanges.change(s.id, { quantity: BigInt(op.qty) }))
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
                const refund = yield* subsService.refund(
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
                    subsService.recordUsage(s.merchant.id, Subscriptions.usageOf(s.id, op.units, { eventId: `u-${n}` }))
                  )
                  break
                }
                yield* subsService.recordUsage(
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
          const invoices = merchants.reduce((a, m) => a + m.subs.reduce((b, s) => b + s.invoices.length, 0), 0)
          const subscriptions = merchants.reduce((a, m) => a + m.subs.length, 0)
          console.log(
            `model-based money (${name}): ${options.ops} operations, ${subscriptions} subscriptions, ${invoices} invoices, ${events} usage events — all equal to the model`
          )
        }),
      (120 + options.ops / 10) * 1000
    )
  })
