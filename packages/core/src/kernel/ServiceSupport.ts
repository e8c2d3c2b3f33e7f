import { Context, DateTime, Effect, Schema } from "effect"
import { formatInstant } from "./Common.js"
import * as Entities from "./Entities.js"
import * as Ids from "./Ids.js"
import type * as Lifecycle from "./Lifecycle.js"
import type * as Merchant from "../tenants/Merchant.js"
import type * as Store from "./Store.js"
import { Option } from "effect"
import type * as Errors from "./Errors.js"
import { NotFound } from "./Errors.js"
import * as NotificationOutbox from "../notifications/NotificationOutbox.js"

export type StorageService = Context.Service.Shape<typeof import("./Store.js").Storage>

/** The merchant's clock: its frozen time (sandbox) or Effect's Clock. */
export const nowOf = (m: Merchant.Merchant): Effect.Effect<number> =>
  m.frozen_time !== null
    ? Effect.succeed(DateTime.toEpochMillis(m.frozen_time))
    : Effect.clockWith((c) => c.currentTimeMillis)

export const laneOf = (m: Merchant.Merchant): "live" | "frozen" => (m.frozen_time !== null ? "frozen" : "live")

export const dt = (ms: number) => DateTime.makeUnsafe(ms)
export const msOf = (d: DateTime.Utc) => DateTime.toEpochMillis(d)

/**
 * Writes one event to the outbox (inside the caller's transaction): payload `{id, type, created,
 * sequence, data}`; and the customer notification it causes, if the merchant sends one.
 */
export const emit = <A, I>(
  storage: StorageService,
  input: {
    readonly merchant_id: string
    readonly type: Lifecycle.EventType
    readonly business_id: string
    readonly schema: Schema.Codec<A, I>
    readonly data: A
    readonly at: number
  }
) =>
  Effect.gen(function* () {
    const sequence = yield* storage.outbox.nextSequence(input.merchant_id, input.business_id)
    const id = yield* Ids.make(Ids.prefixes.webhookEvent)
    const data = Schema.encodeSync(input.schema)(input.data)
    const event: Store.OutboxEvent = {
      id,
      merchant_id: input.merchant_id,
      type: input.type,
      business_id: input.business_id,
      content: JSON.stringify({ id, type: input.type, created: formatInstant(input.at), sequence, data }),
      sequence,
      created_at: input.at
    }
    yield* storage.outbox.append([event])
    yield* NotificationOutbox.record(storage, input.merchant_id, [{ type: input.type, data, at: input.at }])
    return event
  })

/** An event to write with `emitMany`: its payload is encoded when written. */
export interface PendingEvent {
  readonly type: Lifecycle.EventType
  readonly business_id: string
  readonly at: number
  readonly encode: Effect.Effect<unknown>
}

/** Describes one event for `emitMany`. */
export const pending = <A, I>(input: {
  readonly type: Lifecycle.EventType
  readonly business_id: string
  readonly schema: Schema.Codec<A, I>
  readonly data: A
  readonly at: number
}): PendingEvent => ({
  type: input.type,
  business_id: input.business_id,
  at: input.at,
  encode: Effect.sync(() => Schema.encodeSync(input.schema)(input.data))
})

/**
 * Writes many events of one merchant to the outbox (inside the caller's transaction) in two
 * round trips whatever their number: one for the objects' sequence numbers, one insert. Events
 * of one object keep their order and get consecutive sequences, exactly as `emit` one by one;
 * the notifications they cause are written with them.
 */
export const emitMany = (storage: StorageService, merchantId: string, events: ReadonlyArray<PendingEvent>) =>
  Effect.gen(function* () {
    if (events.length === 0) return []
    const next = new Map(
      yield* storage.outbox.nextSequences(
        merchantId,
        events.map((e) => e.business_id)
      )
    )
    const written: Array<Store.OutboxEvent> = []
    const causes: Array<{ readonly type: string; readonly data: unknown; readonly at: number }> = []
    for (const e of events) {
      const sequence = next.get(e.business_id) ?? 1
      next.set(e.business_id, sequence + 1)
      const id = yield* Ids.make(Ids.prefixes.webhookEvent)
      const data = yield* e.encode
      causes.push({ type: e.type, data, at: e.at })
      written.push({
        id,
        merchant_id: merchantId,
        type: e.type,
        business_id: e.business_id,
        content: JSON.stringify({ id, type: e.type, created: formatInstant(e.at), sequence, data }),
        sequence,
        created_at: e.at
      })
    }
    yield* storage.outbox.append(written)
    yield* NotificationOutbox.record(storage, merchantId, causes)
    return written
  })

/** Emits several events of one object in order. */
export const emitAll = <A, I>(
  storage: StorageService,
  types: ReadonlyArray<Lifecycle.EventType>,
  input: {
    readonly merchant_id: string
    readonly business_id: string
    readonly schema: Schema.Codec<A, I>
    readonly data: A
    readonly at: number
  }
) => Effect.forEach(types, (type) => emit(storage, { ...input, type }), { discard: true })

/**
 * "Now" for a merchant looked up by id: a sandbox merchant's frozen time, else Effect's Clock.
 * Every object a merchant creates is stamped on its clock, so a sandbox replays exactly.
 */
export const merchantNow = (storage: StorageService) => {
  const merchants = storage.repository(Entities.merchant)
  return (merchantId: string): Effect.Effect<number> =>
    Effect.flatMap(Effect.service(knownMerchant), (known) =>
      known !== undefined && known.merchant_id === merchantId
        ? nowOf(known)
        : Effect.flatMap(Effect.orDie(merchants.get(merchantId, merchantId)), (found) =>
            found._tag === "Some" ? nowOf(found.value.value) : Effect.clockWith((c) => c.currentTimeMillis)
          )
    )
}

/**
 * The merchant the current request authenticated as, read at the start of the request
 * (`Merchants.asCaller`): `merchantNow` takes its clock from it instead of reading the row again.
 * The only change of a merchant's clock, `Billing.advanceClock`, runs without it.
 */
export const knownMerchant: Context.Reference<Merchant.Merchant | undefined> = Context.Reference<
  Merchant.Merchant | undefined
>("@recur/core/internal/knownMerchant", { defaultValue: () => undefined })

// ------------------------------------------------------------------ reads every service makes

/** Another writer got there first: a store's `VersionConflict`, or the engine's `ConcurrentUpdate`. */
export const isVersionConflict = (u: unknown): u is Store.VersionConflict | Errors.ConcurrentUpdate =>
  typeof u === "object" &&
  u !== null &&
  ((u as { _tag?: unknown })._tag === "VersionConflict" || (u as { _tag?: unknown })._tag === "ConcurrentUpdate")

/** The record read, or `NotFound` for `resource` `id`. */
export const must = <A>(o: Option.Option<Store.Versioned<A>>, resource: string, id: string) =>
  Option.match(o, { onNone: () => Effect.fail(new NotFound({ resource, id })), onSome: Effect.succeed })
