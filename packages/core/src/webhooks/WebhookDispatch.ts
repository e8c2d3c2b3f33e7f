/**
 * Webhook delivery: the outbox fanned out to the endpoints subscribed to each event, signed
 * attempts through the `WebhookTransport` port, retries on the policy of `WebhookDelivery`, and
 * the dispatcher loop that drains the outbox (leased, so many can run at once).
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer, Option, Result } from "effect"
import * as Entities from "../kernel/Entities.js"
import { laneOf, nowOf } from "../kernel/ServiceSupport.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Ports from "../kernel/Ports.js"
import * as WebhookDelivery from "./WebhookDelivery.js"
import * as Ids from "../kernel/Ids.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Store from "../kernel/Store.js"
import * as Telemetry from "../kernel/Telemetry.js"
import * as Webhook from "./Webhook.js"

/**
 * The webhook-dispatch service.
 *
 * @since 0.1.0
 */
export class WebhookDispatch extends Context.Service<WebhookDispatch>()("@recur/core/WebhookDispatch", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const secrets = yield* Secrets.Secrets
    const merchants = yield* Merchants.Merchants
    const transport = yield* Ports.WebhookTransport
    const endpoints = storage.repository(Entities.webhookEndpoint)
    const events = storage.repository(Entities.webhookEvent)
    const deliveries = storage.repository(Entities.webhookDelivery)

    const enabledEndpoints = (merchantId: string) =>
      Effect.gen(function* () {
        const out: Array<Entities.WebhookEndpointRecord> = []
        let cursor: string | undefined
        for (;;) {
          const page = yield* Effect.orDie(
            endpoints.list(merchantId, {
              limit: 100,
              starting_after: cursor,
              filters: [{ column: "status", op: "in", values: ["enabled"] }]
            })
          )
          out.push(...page.list)
          if (!page.has_more) return out
          cursor = page.list[page.list.length - 1]!.endpoint.id
        }
      })

    const subscribedTo = (list: ReadonlyArray<Entities.WebhookEndpointRecord>, type: string) =>
      list.filter((e) => e.endpoint.all_events || e.endpoint.event_types.includes(type as Lifecycle.EventType))

    /** Enabled endpoints of a merchant subscribed to an event type. */
    const subscribers = (merchantId: string, type: string) =>
      Effect.map(enabledEndpoints(merchantId), (list) => subscribedTo(list, type))

    /**
     * Fans one outbox event out: a `pending` delivery per subscribed endpoint, each with a
     * safety-net work item one retry interval out (the dispatcher attempts at once; the item
     * only fires if that attempt never happened). Idempotent: a second call creates nothing.
     */
    const fanOut = Effect.fn("WebhookDispatch.fanOut")(function* (
      event: Store.OutboxEvent,
      known?: ReadonlyArray<Entities.WebhookEndpointRecord>
    ) {
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
              status: Lifecycle.webhookDelivery.initial,
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
            yield* storage.workQueue.schedule({
              lane: laneOf(merchant),
              merchant_id: event.merchant_id,
              kind: "webhook",
              subject_id: record.id,
              due_at: at + WebhookDelivery.policy.firstRetryMs
            })
            created.push(record)
          }
          return created
        })
      )
    })

    /**
     * One attempt of one delivery, if it is still open: signs, POSTs through the transport,
     * records the attempt, and moves the delivery to `succeeded`, `retrying` (next attempt
     * scheduled on the merchant's clock) or `failed`. A 410 answer disables the endpoint.
     * Returns the delivery's status afterwards.
     */
    const deliver = Effect.fn("WebhookDispatch.deliver")(function* (merchantId: string, deliveryId: string) {
      yield* Effect.annotateCurrentSpan({ deliveryId })

      const found = yield* deliveries.get(merchantId, deliveryId)
      if (Option.isNone(found)) return "missing" as const
      const d = found.value.value
      if (d.status === "succeeded" || d.status === "failed") return d.status
      const merchant = yield* Effect.orDie(merchants.get(merchantId))
      const at = yield* nowOf(merchant)
      const endpoint = yield* endpoints.get(merchantId, d.endpoint_id)
      const event = yield* events.get(merchantId, d.event_id)
      const finish = (next: Entities.DeliveryRecord, retryAt: Option.Option<number>, disable: boolean) =>
        storage
          .withTransaction(
            Effect.gen(function* () {
              yield* deliveries.update(next, found.value.version)
              if (Option.isSome(retryAt))
                yield* storage.workQueue.schedule({
                  lane: laneOf(merchant),
                  merchant_id: merchantId,
                  kind: "webhook",
                  subject_id: deliveryId,
                  due_at: retryAt.value
                })
              else yield* storage.workQueue.cancel(merchantId, "webhook", deliveryId)
              if (disable && Option.isSome(endpoint)) {
                const gone = Webhook.moveEndpoint(endpoint.value.value.endpoint, "gone")
                if (Result.isSuccess(gone))
                  yield* endpoints.update(
                    { ...endpoint.value.value, endpoint: gone.success.value },
                    endpoint.value.version
                  )
              }
            })
          )
          .pipe(
            Effect.catchTags({ VersionConflict: () => Effect.void, UniqueViolation: () => Effect.void }),
            Effect.as(next.status)
          )
      if (Option.isNone(endpoint) || Option.isNone(event) || endpoint.value.value.endpoint.status !== "enabled") {
        const reason = Option.isNone(event) ? "event not found" : "endpoint disabled or deleted"
        return yield* finish(
          Lifecycle.must(Webhook.moveDelivery(d, "abandon", { next_attempt_at: null, last_error: reason })),
          Option.none(),
          false
        )
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
      const answer = yield* Effect.result(
        transport.send({
          url: ep.endpoint.url,
          headers: signed,
          body,
          timeoutMs: WebhookDelivery.policy.timeoutMs,
          allowPrivateNetwork: merchant.mode === "sandbox"
        })
      )
      const latency = (yield* Clock.currentTimeMillis) - started
      const status = Result.isSuccess(answer) ? answer.success.status : null
      const error = Result.isFailure(answer)
        ? `${answer.failure.reason}: ${answer.failure.message}`
        : status !== null && !WebhookDelivery.isSuccess(status)
          ? `HTTP ${status}`
          : null
      const firstAt = d.first_attempt_at ?? at
      const attempts = d.attempts + 1
      // one line per attempt, with the numbers the metrics count
      const delivered = status !== null && WebhookDelivery.isSuccess(status)
      yield* Telemetry.countWebhookAttempt({ delivered, durationMs: latency, lagMs: at - event.value.value.created_at })
      yield* (delivered ? Effect.logInfo("webhook attempt") : Effect.logWarning("webhook attempt")).pipe(
        Effect.annotateLogs({
          event: "recur.webhook.attempt",
          merchant_id: merchantId,
          endpoint_id: d.endpoint_id,
          event_id: d.event_id,
          delivery_id: deliveryId,
          attempt: attempts,
          status_code: status ?? "none",
          outcome: delivered ? "delivered" : "failed",
          duration_ms: latency,
          // the kind of failure only: the transport's message names the endpoint's URL, whose path
          // may hold a secret (the merchant reads the whole message in the delivery's last_error)
          ...(Result.isFailure(answer) ? { error: answer.failure.reason } : error !== null ? { error } : {})
        })
      )
      const recorded = {
        ...d,
        attempts,
        first_attempt_at: firstAt,
        last_status_code: status,
        last_error: error,
        history: [...d.history, { at, status_code: status, latency_ms: latency, error }]
      }
      if (status !== null && WebhookDelivery.isSuccess(status))
        return yield* finish(
          Lifecycle.must(Webhook.moveDelivery(recorded, "delivered", { next_attempt_at: null })),
          Option.none(),
          false
        )
      if (status === 410)
        return yield* finish(
          Lifecycle.must(Webhook.moveDelivery(recorded, "abandon", { next_attempt_at: null })),
          Option.none(),
          true
        )
      const retryAt = WebhookDelivery.nextRetryAt(attempts, firstAt, at)
      return yield* finish(
        Lifecycle.must(
          Webhook.moveDelivery(recorded, Option.isSome(retryAt) ? "attempt_failed" : "retries_exhausted", {
            next_attempt_at: Option.getOrNull(retryAt)
          })
        ),
        retryAt,
        false
      )
    })

    /**
     * One dispatcher pass: claims up to `limit` outbox events (leased, so many dispatchers can
     * run at once), fans each out, marks it dispatched, and makes every new delivery's first
     * attempt. Returns how many events it took.
     */
    const dispatchOnce = Effect.fn("WebhookDispatch.dispatchOnce")(function* (options: {
      readonly owner: string
      readonly limit?: number
      readonly leaseMs?: number
      readonly concurrency?: number
    }) {
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* storage.outbox.claim({
        now,
        limit: options.limit ?? 100,
        leaseMs: options.leaseMs ?? 60_000,
        owner: options.owner
      })
      // one endpoint query per merchant per pass; the events nobody subscribes to (most of
      // them) are marked dispatched together in one statement
      const merchantIds = [...new Set(claimed.map((e) => e.merchant_id))]
      const lists = new Map(
        yield* Effect.forEach(merchantIds, (m) => Effect.map(enabledEndpoints(m), (list) => [m, list] as const), {
          concurrency: options.concurrency ?? 8
        })
      )
      const targeted = claimed.map((event) => ({
        event,
        targets: subscribedTo(lists.get(event.merchant_id) ?? [], event.type)
      }))
      yield* storage.outbox.completeMany(
        targeted.filter((t) => t.targets.length === 0).map((t) => t.event.id),
        options.owner
      )
      yield* Effect.forEach(
        targeted.filter((t) => t.targets.length > 0),
        ({ event, targets }) =>
          Effect.gen(function* () {
            const created = yield* fanOut(event, targets)
            yield* storage.outbox.complete(event.id, options.owner)
            yield* Effect.forEach(created, (d) => deliver(event.merchant_id, d.id), {
              concurrency: options.concurrency ?? 8,
              discard: true
            })
          }),
        { concurrency: options.concurrency ?? 8, discard: true }
      )
      return claimed.length
    })

    /**
     * The dispatcher: `dispatchOnce` until the outbox is drained, then waits `intervalMs`;
     * forever. Retries run with the billing worker (work items of kind `webhook`).
     */
    const dispatcher = Effect.fn("WebhookDispatch.dispatcher")(function* (options: {
      readonly owner: string
      readonly intervalMs?: number
      readonly limit?: number
      readonly leaseMs?: number
    }) {
      for (;;) {
        const n = yield* dispatchOnce(options).pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logError("webhook dispatch failed", cause), 0))
        )
        if (n === 0) yield* Effect.sleep(options.intervalMs ?? 500)
      }
    })

    /**
     * Sends one event again to every enabled endpoint subscribed to it, now: each delivery
     * starts a fresh run of attempts. Returns the event with its per-endpoint statuses.
     */
    /** Every delivery of an event (with its attempts), for operators and tests. */
    const deliveriesOf = Effect.fn("WebhookDispatch.deliveriesOf")(function* (merchantId: string, eventId: string) {
      return yield* Effect.map(
        Effect.orDie(
          deliveries.list(merchantId, { limit: 100, filters: [{ column: "event_id", op: "in", values: [eventId] }] })
        ),
        (p) => p.list
      )
    })

    return { fanOut, deliver, dispatchOnce, dispatcher, deliveriesOf } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
