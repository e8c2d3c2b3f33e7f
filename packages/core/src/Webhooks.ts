/**
 * Webhook endpoints (create with a `whsec_` secret shown once, update, delete, list), the
 * event log with each event's per-endpoint delivery status, and delivery itself: fan-out of
 * outbox events to subscribed endpoints, signed attempts through the `WebhookTransport` port,
 * retries on the merchant's clock, redelivery.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "./Entities.js"
import { laneOf, merchantNow, nowOf } from "./internal/engine.js"
import * as Merchants from "./Merchants.js"
import * as Ports from "./Ports.js"
import * as WebhookDelivery from "./WebhookDelivery.js"
import * as Errors from "./Errors.js"
import * as Ids from "./Ids.js"
import { pageErrors } from "./internal/paging.js"
import * as Lifecycle from "./Lifecycle.js"
import * as Secrets from "./Secrets.js"
import * as Store from "./Store.js"
import * as Webhook from "./Webhook.js"

/**
 * The body of endpoint create/update.
 *
 * @since 0.1.0
 */
export interface EndpointInput {
  readonly url?: string | undefined
  readonly desc?: string | undefined
  readonly all_events?: boolean | undefined
  readonly event_types?: ReadonlyArray<string> | undefined
  readonly event_version?: string | undefined
  readonly status?: string | undefined
}

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

const checkUrl = (url: string) => {
  try {
    const u = new URL(url)
    return (u.protocol === "https:" || u.protocol === "http:") && url.length <= 2048
  } catch {
    return false
  }
}

/**
 * The webhooks service.
 *
 * @since 0.1.0
 */
export class Webhooks extends Context.Service<Webhooks>()("@recur/core/Webhooks", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const secrets = yield* Secrets.Secrets
    const merchants = yield* Merchants.Merchants
    const transport = yield* Ports.WebhookTransport
    const endpoints = storage.repository(Entities.webhookEndpoint)
    const events = storage.repository(Entities.webhookEvent)
    const deliveries = storage.repository(Entities.webhookDelivery)
    const now = merchantNow(storage)

    const checkTypes = (types: ReadonlyArray<string> | undefined) =>
      Effect.forEach(types ?? [], (t) => (Lifecycle.EventType.literals.includes(t as Lifecycle.EventType) ? Effect.void : Effect.fail(invalid("event_types", `unknown event type "${t}"`))), { discard: true })

    const create = (merchantId: string, input: EndpointInput) =>
      Effect.gen(function* () {
        if (input.url === undefined || !checkUrl(input.url)) return yield* invalid("url", "must be an absolute http(s) URL")
        yield* checkTypes(input.event_types)
        const all = input.all_events ?? (input.event_types === undefined || input.event_types.length === 0)
        if (!all && (input.event_types ?? []).length === 0) return yield* invalid("event_types", "give event_types or all_events: true")
        const id = yield* Ids.make(Ids.prefixes.webhookEndpoint)
        const secret = Secrets.webhookSecret()
        yield* Effect.orDie(endpoints.insert({
          merchant_id: merchantId,
          created_at: yield* now(merchantId),
          secret_ciphertext: yield* secrets.encrypt(secret),
          endpoint: new Webhook.WebhookEndpoint({ id, url: input.url, desc: input.desc ?? null, event_version: input.event_version ?? "v2", all_events: all, event_types: (input.event_types ?? []) as ReadonlyArray<Lifecycle.EventType>, status: "enabled" })
        }))
        return { id, secret }
      }).pipe(Effect.withSpan("Webhooks.create"))

    const get = (merchantId: string, id: string) =>
      Effect.flatMap(endpoints.get(merchantId, id), (o) => Option.match(o, { onNone: () => Effect.fail(new Errors.NotFound({ resource: "webhook_endpoint", id })), onSome: Effect.succeed }))

    const update = (merchantId: string, id: string, input: EndpointInput) =>
      Effect.gen(function* () {
        const current = yield* get(merchantId, id)
        if (input.url !== undefined && !checkUrl(input.url)) return yield* invalid("url", "must be an absolute http(s) URL")
        if (input.status !== undefined && input.status !== "enabled" && input.status !== "disabled") return yield* invalid("status", "must be enabled or disabled")
        yield* checkTypes(input.event_types)
        const e = current.value.endpoint
        const next = new Webhook.WebhookEndpoint({
          ...e,
          ...(input.url !== undefined ? { url: input.url } : {}),
          ...(input.desc !== undefined ? { desc: input.desc } : {}),
          ...(input.all_events !== undefined ? { all_events: input.all_events } : {}),
          ...(input.event_types !== undefined ? { event_types: input.event_types as ReadonlyArray<Lifecycle.EventType> } : {}),
          ...(input.status !== undefined ? { status: input.status as "enabled" | "disabled" } : {})
        })
        yield* Effect.orDie(endpoints.update({ ...current.value, endpoint: next }, current.version))
        return next
      }).pipe(Effect.withSpan("Webhooks.update"))

    const remove = (merchantId: string, id: string) =>
      Effect.gen(function* () {
        yield* get(merchantId, id)
        yield* endpoints.remove(merchantId, id)
      }).pipe(Effect.withSpan("Webhooks.delete"))

    const list = (merchantId: string, q: { readonly status?: ReadonlyArray<string>; readonly created?: Store.CreatedRange; readonly limit: number; readonly starting_after?: string | undefined; readonly ending_before?: string | undefined }) =>
      Effect.map(
        pageErrors(endpoints.list(merchantId, { filters: q.status && q.status.length ? [{ column: "status", op: "in", values: q.status }] : [], limit: q.limit, starting_after: q.starting_after, ending_before: q.ending_before, ...(q.created ? { created: q.created } : {}) })),
        (p) => ({ has_more: p.has_more, list: p.list.map((e) => e.endpoint) })
      ).pipe(Effect.withSpan("Webhooks.list"))

    const eventView = (merchantId: string, e: Entities.EventRecord) =>
      Effect.gen(function* () {
        const ds = yield* Effect.orDie(deliveries.list(merchantId, { limit: 100, filters: [{ column: "event_id", op: "in", values: [e.id] }] }))
        const endpointEvents = yield* Effect.forEach(ds.list, (d) =>
          Effect.map(endpoints.get(merchantId, d.endpoint_id), (ep) => new Webhook.EndpointEvent({ endpoint_id: d.endpoint_id, url: Option.match(ep, { onNone: () => "", onSome: (v) => v.value.endpoint.url }), event_status: d.status }))
        )
        return new Webhook.WebhookEvent({ id: e.id, business_id: e.business_id, event_type: e.type as Lifecycle.EventType, content: e.content, endpoint_events: endpointEvents })
      })

    const listEvents = (merchantId: string, q: { readonly business_ids?: ReadonlyArray<string>; readonly event_types?: ReadonlyArray<string>; readonly event_statuses?: ReadonlyArray<string>; readonly created?: Store.CreatedRange; readonly limit: number; readonly starting_after?: string | undefined; readonly ending_before?: string | undefined }) =>
      Effect.gen(function* () {
        const filters: Array<Store.Filter> = []
        if (q.business_ids?.length) filters.push({ column: "business_id", op: "in", values: q.business_ids })
        if (q.event_types?.length) filters.push({ column: "type", op: "in", values: q.event_types })
        if (q.event_statuses?.length) {
          const matching = yield* Effect.orDie(deliveries.list(merchantId, { limit: 100, filters: [{ column: "status", op: "in", values: q.event_statuses }] }))
          filters.push({ column: "id", op: "in", values: [...new Set(matching.list.map((d) => d.event_id)), "__none__"] })
        }
        const page = yield* pageErrors(events.list(merchantId, { filters, limit: q.limit, starting_after: q.starting_after, ending_before: q.ending_before, ...(q.created ? { created: q.created } : {}) }))
        const list = yield* Effect.forEach(page.list, (e) => eventView(merchantId, e))
        return { has_more: page.has_more, list }
      }).pipe(Effect.withSpan("Webhooks.listEvents"))

    /** The endpoint's secret, for signing deliveries. */
    const secretOf = (merchantId: string, id: string) => Effect.flatMap(get(merchantId, id), (v) => secrets.decrypt(v.value.secret_ciphertext))

    // ------------------------------------------------------------------ delivery

    /** A merchant's enabled endpoints. */
    const enabledEndpoints = (merchantId: string) =>
      Effect.gen(function* () {
        const out: Array<Entities.WebhookEndpointRecord> = []
        let cursor: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(endpoints.list(merchantId, { limit: 100, starting_after: cursor, filters: [{ column: "status", op: "in", values: ["enabled"] }] }))
          out.push(...page.list)
          if (!page.has_more) return out
          cursor = page.list[page.list.length - 1]!.endpoint.id
        }
      })

    const subscribedTo = (list: ReadonlyArray<Entities.WebhookEndpointRecord>, type: string) =>
      list.filter((e) => e.endpoint.all_events || e.endpoint.event_types.includes(type as Lifecycle.EventType))

    /** Enabled endpoints of a merchant subscribed to an event type. */
    const subscribers = (merchantId: string, type: string) => Effect.map(enabledEndpoints(merchantId), (list) => subscribedTo(list, type))

    /**
     * Fans one outbox event out: a `pending` delivery per subscribed endpoint, each with a
     * safety-net work item one retry interval out (the dispatcher attempts at once; the item
     * only fires if that attempt never happened). Idempotent: a second call creates nothing.
     */
    const fanOut = (event: Store.OutboxEvent, known?: ReadonlyArray<Entities.WebhookEndpointRecord>) =>
      Effect.gen(function* () {
        // most events of most merchants have no subscriber: answer those with one query
        const targets = known ?? (yield* subscribers(event.merchant_id, event.type))
        if (targets.length === 0) return [] as ReadonlyArray<Entities.DeliveryRecord>
        const merchant = yield* Effect.orDie(merchants.get(event.merchant_id))
        const at = yield* nowOf(merchant)
        return yield* storage.withTransaction(
          Effect.gen(function* () {
            const created: Array<Entities.DeliveryRecord> = []
            for (const target of targets) {
              const record: Entities.DeliveryRecord = {
                id: yield* Ids.make(Ids.prefixes.webhookDelivery),
                merchant_id: event.merchant_id,
                event_id: event.id,
                endpoint_id: target.endpoint.id,
                status: "pending",
                attempts: 0,
                next_attempt_at: at,
                last_status_code: null,
                last_error: null,
                created_at: at,
                first_attempt_at: null,
                history: []
              }
              const inserted = yield* Effect.result(deliveries.insert(record))
              if (Result.isFailure(inserted)) continue
              yield* storage.workQueue.schedule({ lane: laneOf(merchant), merchant_id: event.merchant_id, kind: "webhook", subject_id: record.id, due_at: at + WebhookDelivery.policy.firstRetryMs })
              created.push(record)
            }
            return created
          })
        )
      }).pipe(Effect.withSpan("Webhooks.fanOut"))

    /**
     * One attempt of one delivery, if it is still open: signs, POSTs through the transport,
     * records the attempt, and moves the delivery to `succeeded`, `retrying` (next attempt
     * scheduled on the merchant's clock) or `failed`. A 410 answer disables the endpoint.
     * Returns the delivery's status afterwards.
     */
    const deliver = (merchantId: string, deliveryId: string) =>
      Effect.gen(function* () {
        const found = yield* deliveries.get(merchantId, deliveryId)
        if (Option.isNone(found)) return "missing" as const
        const d = found.value.value
        if (d.status === "succeeded" || d.status === "failed") return d.status
        const merchant = yield* Effect.orDie(merchants.get(merchantId))
        const at = yield* nowOf(merchant)
        const endpoint = yield* endpoints.get(merchantId, d.endpoint_id)
        const event = yield* events.get(merchantId, d.event_id)
        const finish = (next: Entities.DeliveryRecord, retryAt: Option.Option<number>, disable: boolean) =>
          storage.withTransaction(
            Effect.gen(function* () {
              yield* deliveries.update(next, found.value.version)
              if (Option.isSome(retryAt)) yield* storage.workQueue.schedule({ lane: laneOf(merchant), merchant_id: merchantId, kind: "webhook", subject_id: deliveryId, due_at: retryAt.value })
              else yield* storage.workQueue.cancel(merchantId, "webhook", deliveryId)
              if (disable && Option.isSome(endpoint)) {
                yield* endpoints.update({ ...endpoint.value.value, endpoint: new Webhook.WebhookEndpoint({ ...endpoint.value.value.endpoint, status: "disabled" }) }, endpoint.value.version)
              }
            })
          ).pipe(Effect.catchTags({ VersionConflict: () => Effect.void, UniqueViolation: () => Effect.void }), Effect.as(next.status))
        if (Option.isNone(endpoint) || Option.isNone(event) || endpoint.value.value.endpoint.status !== "enabled") {
          const reason = Option.isNone(event) ? "event not found" : "endpoint disabled or deleted"
          return yield* finish({ ...d, status: "failed", next_attempt_at: null, last_error: reason }, Option.none(), false)
        }
        const ep = endpoint.value.value
        const body = event.value.value.content
        const started = yield* Clock.currentTimeMillis
        const signed = yield* WebhookDelivery.headers({
          body,
          eventId: event.value.value.id,
          eventType: event.value.value.type,
          timestampMs: started,
          keys: yield* Effect.orDie(merchants.signingKeys(merchantId)),
          endpointSecret: yield* secrets.decrypt(ep.secret_ciphertext)
        })
        const answer = yield* Effect.result(transport.send({ url: ep.endpoint.url, headers: signed, body, timeoutMs: WebhookDelivery.policy.timeoutMs, allowPrivateNetwork: merchant.mode === "sandbox" }))
        const latency = (yield* Clock.currentTimeMillis) - started
        const status = Result.isSuccess(answer) ? answer.success.status : null
        const error = Result.isFailure(answer) ? `${answer.failure.reason}: ${answer.failure.message}` : status !== null && !WebhookDelivery.isSuccess(status) ? `HTTP ${status}` : null
        const firstAt = d.first_attempt_at ?? at
        const attempts = d.attempts + 1
        const recorded = { ...d, attempts, first_attempt_at: firstAt, last_status_code: status, last_error: error, history: [...d.history, { at, status_code: status, latency_ms: latency, error }] }
        if (status !== null && WebhookDelivery.isSuccess(status)) return yield* finish({ ...recorded, status: "succeeded", next_attempt_at: null }, Option.none(), false)
        if (status === 410) return yield* finish({ ...recorded, status: "failed", next_attempt_at: null }, Option.none(), true)
        const retryAt = WebhookDelivery.nextRetryAt(attempts, firstAt, at)
        return yield* finish({ ...recorded, status: Option.isSome(retryAt) ? "retrying" : "failed", next_attempt_at: Option.getOrNull(retryAt) }, retryAt, false)
      }).pipe(Effect.withSpan("Webhooks.deliver", { attributes: { deliveryId } }))

    /**
     * One dispatcher pass: claims up to `limit` outbox events (leased, so many dispatchers can
     * run at once), fans each out, marks it dispatched, and makes every new delivery's first
     * attempt. Returns how many events it took.
     */
    const dispatchOnce = (options: { readonly owner: string; readonly limit?: number; readonly leaseMs?: number; readonly concurrency?: number }) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* storage.outbox.claim({ now, limit: options.limit ?? 100, leaseMs: options.leaseMs ?? 60_000, owner: options.owner })
        // one endpoint query per merchant per pass; the events nobody subscribes to (most of
        // them) are marked dispatched together in one statement
        const merchantIds = [...new Set(claimed.map((e) => e.merchant_id))]
        const lists = new Map(yield* Effect.forEach(merchantIds, (m) => Effect.map(enabledEndpoints(m), (list) => [m, list] as const), { concurrency: options.concurrency ?? 8 }))
        const targeted = claimed.map((event) => ({ event, targets: subscribedTo(lists.get(event.merchant_id) ?? [], event.type) }))
        yield* storage.outbox.completeMany(targeted.filter((t) => t.targets.length === 0).map((t) => t.event.id), options.owner)
        yield* Effect.forEach(targeted.filter((t) => t.targets.length > 0), ({ event, targets }) =>
          Effect.gen(function* () {
            const created = yield* fanOut(event, targets)
            yield* storage.outbox.complete(event.id, options.owner)
            yield* Effect.forEach(created, (d) => deliver(event.merchant_id, d.id), { concurrency: options.concurrency ?? 8, discard: true })
          }), { concurrency: options.concurrency ?? 8, discard: true })
        return claimed.length
      }).pipe(Effect.withSpan("Webhooks.dispatchOnce"))

    /**
     * The dispatcher: `dispatchOnce` until the outbox is drained, then waits `intervalMs`;
     * forever. Retries run with the billing worker (work items of kind `webhook`).
     */
    const dispatcher = (options: { readonly owner: string; readonly intervalMs?: number; readonly limit?: number; readonly leaseMs?: number }) =>
      Effect.gen(function* () {
        for (;;) {
          const n = yield* dispatchOnce(options).pipe(Effect.catchCause((cause) => Effect.as(Effect.logError("webhook dispatch failed", cause), 0)))
          if (n === 0) yield* Effect.sleep(options.intervalMs ?? 500)
        }
      })

    /**
     * Sends one event again to every enabled endpoint subscribed to it, now: each delivery
     * starts a fresh run of attempts. Returns the event with its per-endpoint statuses.
     */
    const resend = (merchantId: string, eventId: string) =>
      Effect.gen(function* () {
        const event = yield* Effect.flatMap(events.get(merchantId, eventId), (o) =>
          Option.match(o, { onNone: () => Effect.fail(new Errors.NotFound({ resource: "webhook_event", id: eventId })), onSome: (v) => Effect.succeed(v.value) }))
        yield* fanOut({ ...event })
        const existing = yield* Effect.orDie(deliveries.list(merchantId, { limit: 100, filters: [{ column: "event_id", op: "in", values: [eventId] }] }))
        const merchant = yield* Effect.orDie(merchants.get(merchantId))
        const at = yield* nowOf(merchant)
        yield* Effect.forEach(existing.list, (d) =>
          Effect.gen(function* () {
            const current = yield* deliveries.get(merchantId, d.id)
            if (Option.isNone(current)) return
            yield* deliveries.update({ ...current.value.value, status: "pending", attempts: 0, first_attempt_at: null, next_attempt_at: at }, current.value.version).pipe(Effect.catch(() => Effect.void))
            yield* deliver(merchantId, d.id)
          }), { discard: true, concurrency: 4 })
        return yield* eventView(merchantId, event)
      }).pipe(Effect.withSpan("Webhooks.resend"))

    /** Every delivery of an event (with its attempts), for operators and tests. */
    const deliveriesOf = (merchantId: string, eventId: string) =>
      Effect.map(Effect.orDie(deliveries.list(merchantId, { limit: 100, filters: [{ column: "event_id", op: "in", values: [eventId] }] })), (p) => p.list)

    return { create, update, delete: remove, list, listEvents, secretOf, fanOut, deliver, dispatchOnce, dispatcher, resend, deliveriesOf } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
