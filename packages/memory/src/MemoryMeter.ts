/**
 * The meter event store in memory: the same semantics as the SQL store's table and queries
 * (`Store.MeterEvents`), computed in TypeScript with exact bigint millionths.
 *
 * @since 0.1.0
 */
import { type Aggregation, MeterValues, type Store } from "@recur/core"
import { Effect, Option } from "effect"

type Undo = () => void

/** Runs a write atomically, joining the open transaction (its undo log) when in one. */
export type Write = <A>(f: (undo: (u: Undo) => void) => A) => Effect.Effect<A>

interface Stored {
  event: Store.MeterEvent
  readonly seq: number
}

const HOUR_MS = 3_600_000n

/** The value of one group's events (already filtered and in ingestion order). */
const groupValue = (
  spec: Aggregation.AggregationSpec,
  inPeriod: ReadonlyArray<Stored>,
  prior: Stored | undefined,
  from: number,
  to: number
): { readonly value: string; readonly events: number } | undefined => {
  const p = spec.property ?? ""
  const read = (s: Stored) => s.event.properties[p]
  switch (spec.aggregation) {
    case "count":
      return inPeriod.length === 0 ? undefined : { value: String(inPeriod.length), events: inPeriod.length }
    case "unique_count": {
      const present = inPeriod.filter((s) => read(s) !== undefined)
      return present.length === 0
        ? undefined
        : { value: String(new Set(present.map((s) => MeterValues.text(read(s)))).size), events: present.length }
    }
    case "sum":
    case "max":
    case "latest": {
      const values = inPeriod.flatMap((s) => {
        const v = MeterValues.micros(read(s))
        return v === undefined ? [] : [{ s, v }]
      })
      if (values.length === 0) return undefined
      let acc = values[0]!
      let sum = 0n
      for (const x of values) {
        sum += x.v
        if (spec.aggregation === "max" ? x.v > acc.v : spec.aggregation === "latest" && later(x.s, acc.s)) acc = x
      }
      return { value: MeterValues.formatMicros(spec.aggregation === "sum" ? sum : acc.v), events: values.length }
    }
    case "weighted_sum": {
      const readings = inPeriod.flatMap((s) => {
        const v = MeterValues.micros(read(s))
        return v === undefined ? [] : [{ at: s.event.timestamp, seq: s.seq, v }]
      })
      const start = prior === undefined ? undefined : MeterValues.micros(read(prior))
      if (readings.length === 0 && start === undefined) return undefined
      readings.sort((a, b) => a.at - b.at || a.seq - b.seq)
      let level = start ?? 0n
      let since = from
      let total = 0n
      for (const r of readings) {
        total += level * BigInt(r.at - since)
        level = r.v
        since = r.at
      }
      total += level * BigInt(to - since)
      return { value: MeterValues.formatMicros(divideHalfEven(total, HOUR_MS)), events: readings.length }
    }
  }
}

const later = (a: Stored, b: Stored) =>
  a.event.timestamp > b.event.timestamp || (a.event.timestamp === b.event.timestamp && a.seq > b.seq)

const divideHalfEven = (n: bigint, d: bigint): bigint => {
  const negative = n < 0n
  const m = negative ? -n : n
  let q = m / d
  const twice = (m % d) * 2n
  if (twice > d || (twice === d && q % 2n === 1n)) q += 1n
  return negative ? -q : q
}

/**
 * Builds the in-memory meter event store on a storage's atomic `write`.
 *
 * @since 0.1.0
 */
export const make = (write: Write): Store.MeterEvents => {
  const events: Array<Stored> = []
  const byTransaction = new Map<string, Stored>()
  const byId = new Map<string, Stored>()
  let seq = 0
  const key = (merchantId: string, transactionId: string) => `${merchantId}\u0000${transactionId}`

  const aggregate = (q: Store.MeterAggregateQuery): ReadonlyArray<Aggregation.AggregatedValue> => {
    const { spec } = q
    const numeric = spec.aggregation !== "count" && spec.aggregation !== "unique_count"
    const matching = events.filter(
      ({ event: e }) =>
        e.merchant_id === q.merchant_id &&
        e.customer_id === q.customer_id &&
        e.code === q.code &&
        e.voided_at === null &&
        e.timestamp < q.to &&
        (q.subscription_id === undefined || e.subscription_id === q.subscription_id) &&
        spec.filters.every((f) => {
          const t = MeterValues.text(e.properties[f.property])
          return t !== null && f.values.includes(t)
        }) &&
        (!numeric || MeterValues.micros(e.properties[spec.property ?? ""]) !== undefined)
    )
    const groups = new Map<string, { group: Array<string | null>; inPeriod: Array<Stored>; prior?: Stored }>()
    for (const s of matching) {
      const group = spec.group_by.map((g) => MeterValues.text(s.event.properties[g]))
      const k = JSON.stringify(group)
      const inPeriod = s.event.timestamp >= q.from
      // before the period, only weighted_sum reads an event: the level the period starts at
      if (!inPeriod && spec.aggregation !== "weighted_sum") continue
      const entry = groups.get(k) ?? { group, inPeriod: [] }
      groups.set(k, entry)
      if (inPeriod) entry.inPeriod.push(s)
      else if (entry.prior === undefined || later(s, entry.prior)) entry.prior = s
    }
    const out: Array<Aggregation.AggregatedValue> = []
    for (const g of groups.values()) {
      const v = groupValue(spec, g.inPeriod, g.prior, q.from, q.to)
      if (v !== undefined) out.push({ group: g.group, ...v })
    }
    return out.length === 0 && spec.group_by.length === 0 ? [{ group: [], value: "0", events: 0 }] : out
  }

  return {
    insertMany: (batch) =>
      write((undo) => {
        const added: Array<Store.MeterEvent> = []
        for (const event of batch) {
          const k = key(event.merchant_id, event.transaction_id)
          if (byTransaction.has(k) || byId.has(event.id)) continue
          const stored: Stored = { event, seq: ++seq }
          events.push(stored)
          byTransaction.set(k, stored)
          byId.set(event.id, stored)
          undo(() => {
            events.splice(events.lastIndexOf(stored), 1)
            byTransaction.delete(k)
            byId.delete(event.id)
          })
          added.push(event)
        }
        return added
      }),
    aggregate: (q) => Effect.sync(() => aggregate(q)),
    get: (merchantId, transactionId) =>
      Effect.sync(() => Option.fromNullishOr(byTransaction.get(key(merchantId, transactionId))?.event)),
    list: (merchantId, query) =>
      Effect.sync(() => {
        const cursor = query.starting_after === undefined ? undefined : byId.get(query.starting_after)
        // a cursor that is not one of the merchant's events reads nothing (as in SQL)
        if (query.starting_after !== undefined && cursor?.event.merchant_id !== merchantId)
          return { list: [], has_more: false }
        const page = events
          .filter(
            (s) =>
              s.event.merchant_id === merchantId &&
              (query.customer_id === undefined || s.event.customer_id === query.customer_id) &&
              (query.code === undefined || s.event.code === query.code) &&
              (cursor === undefined || s.seq < cursor.seq)
          )
          .sort((a, b) => b.seq - a.seq)
        return { list: page.slice(0, query.limit).map((s) => s.event), has_more: page.length > query.limit }
      }),
    void: (merchantId, transactionId, at) =>
      write((undo) => {
        const stored = byTransaction.get(key(merchantId, transactionId))
        if (stored === undefined || stored.event.voided_at !== null) return false
        const previous = stored.event
        stored.event = { ...previous, voided_at: at }
        undo(() => {
          stored.event = previous
        })
        return true
      })
  }
}
