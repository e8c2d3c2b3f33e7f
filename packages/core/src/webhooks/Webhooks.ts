/**
 * Webhook endpoints (create with a `whsec_` secret shown once, update, delete, list), the
 * event log with each event's per-endpoint delivery status, and redelivery; delivery itself is
 * {@link WebhookDispatch} (its methods are also here, for the REST adapter and the worker).
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import { merchantNow, nowOf } from "../kernel/ServiceSupport.js"
import * as Merchants from "../tenants/Merchants.js"
import * as NetworkAddress from "../kernel/NetworkAddress.js"
import * as Settings from "../tenants/Settings.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { pageErrors } from "../kernel/Paging.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Store from "../kernel/Store.js"
import * as Webhook from "./Webhook.js"
import * as WebhookDispatch from "./WebhookDispatch.js"

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
    const dispatch = yield* WebhookDispatch.WebhookDispatch
    const settings = yield* Settings.Settings
    const endpoints = storage.repository(Entities.webhookEndpoint)
    const events = storage.repository(Entities.webhookEvent)
    const deliveries = storage.repository(Entities.webhookDelivery)
    const now = merchantNow(storage)

    const checkTypes = (types: ReadonlyArray<string> | undefined) =>
      Effect.forEach(
        types ?? [],
        (t) =>
          Lifecycle.EventType.literals.includes(t as Lifecycle.EventType)
            ? Effect.void
            : Effect.fail(invalid("event_types", `unknown event type "${t}"`)),
        { discard: true }
      )

    /**
     * A live merchant's endpoint may not point at a special-purpose address or at this machine
     * (server-side request forgery); sandbox merchants may, to test against a local receiver.
     * Names are judged again at every delivery, on the address the connection is made to.
     */
    const checkTarget = (merchantId: string, url: string) =>
      Effect.gen(function* () {
        if (settings.webhookPrivateNetwork) return
        const why = NetworkAddress.refusedHost(url)
        if (why === undefined) return
        const merchant = yield* Effect.orDie(merchants.get(merchantId))
        if (merchant.mode === "sandbox") return
        return yield* invalid("url", `${why}: webhooks are not sent to private or special-purpose networks`)
      })

    const create = Effect.fn("Webhooks.create")(function* (merchantId: string, input: EndpointInput) {
      if (input.url === undefined || !checkUrl(input.url))
        return yield* invalid("url", "must be an absolute http(s) URL")
      yield* checkTarget(merchantId, input.url)
      yield* checkTypes(input.event_types)
      const all = input.all_events ?? (input.event_types === undefined || input.event_types.length === 0)
      if (!all && (input.event_types ?? []).length === 0)
        return yield* invalid("event_types", "give event_types or all_events: true")
      const id = yield* Ids.make(Ids.prefixes.webhookEndpoint)
      const secret = Secrets.webhookSecret()
      yield* Effect.orDie(
        endpoints.insert({
          merchant_id: merchantId,
          created_at: yield* now(merchantId),
          secret_ciphertext: yield* secrets.encrypt(secret),
          endpoint: new Webhook.WebhookEndpoint({
            id,
            url: input.url,
            desc: input.desc ?? null,
            event_version: input.event_version ?? "v2",
            all_events: all,
            event_types: (input.event_types ?? []) as ReadonlyArray<Lifecycle.EventType>,
            status: Lifecycle.webhookEndpoint.initial
          })
        })
      )
      return { id, secret }
    })

    const get = (merchantId: string, id: string) =>
      Effect.flatMap(endpoints.get(merchantId, id), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.NotFound({ resource: "webhook_endpoint", id })),
          onSome: Effect.succeed
        })
      )

    const update = Effect.fn("Webhooks.update")(function* (merchantId: string, id: string, input: EndpointInput) {
      const current = yield* get(merchantId, id)
      if (input.url !== undefined && !checkUrl(input.url))
        return yield* invalid("url", "must be an absolute http(s) URL")
      if (input.url !== undefined) yield* checkTarget(merchantId, input.url)
      if (input.status !== undefined && input.status !== "enabled" && input.status !== "disabled")
        return yield* invalid("status", "must be enabled or disabled")
      yield* checkTypes(input.event_types)
      const e = current.value.endpoint
      const edited = new Webhook.WebhookEndpoint({
        ...e,
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.desc !== undefined ? { desc: input.desc } : {}),
        ...(input.all_events !== undefined ? { all_events: input.all_events } : {}),
        ...(input.event_types !== undefined
          ? { event_types: input.event_types as ReadonlyArray<Lifecycle.EventType> }
          : {})
      })
      // enabling or disabling goes through the machine; asking for the state it is in changes nothing
      const next =
        input.status === undefined || input.status === e.status
          ? edited
          : Lifecycle.must(Webhook.moveEndpoint(edited, input.status === "enabled" ? "enable" : "disable"))
      yield* Effect.orDie(endpoints.update({ ...current.value, endpoint: next }, current.version))
      return next
    })

    const remove = Effect.fn("Webhooks.delete")(function* (merchantId: string, id: string) {
      yield* get(merchantId, id)
      yield* endpoints.remove(merchantId, id)
    })

    const list = Effect.fn("Webhooks.list")(function* (
      merchantId: string,
      q: {
        readonly status?: ReadonlyArray<string>
        readonly created?: Store.CreatedRange
        readonly limit: number
        readonly starting_after?: string | undefined
        readonly ending_before?: string | undefined
      }
    ) {
      return yield* Effect.map(
        pageErrors(
          endpoints.list(merchantId, {
            filters: q.status?.length ? [{ column: "status", op: "in", values: q.status }] : [],
            limit: q.limit,
            starting_after: q.starting_after,
            ending_before: q.ending_before,
            ...(q.created ? { created: q.created } : {})
          })
        ),
        (p) => ({ has_more: p.has_more, list: p.list.map((e) => e.endpoint) })
      )
    })

    const eventView = (merchantId: string, e: Entities.EventRecord) =>
      Effect.gen(function* () {
        const ds = yield* Effect.orDie(
          deliveries.list(merchantId, { limit: 100, filters: [{ column: "event_id", op: "in", values: [e.id] }] })
        )
        const endpointEvents = yield* Effect.forEach(ds.list, (d) =>
          Effect.map(
            endpoints.get(merchantId, d.endpoint_id),
            (ep) =>
              new Webhook.EndpointEvent({
                endpoint_id: d.endpoint_id,
                url: Option.match(ep, { onNone: () => "", onSome: (v) => v.value.endpoint.url }),
                event_status: d.status
              })
          )
        )
        return new Webhook.WebhookEvent({
          id: e.id,
          business_id: e.business_id,
          event_type: e.type as Lifecycle.EventType,
          content: e.content,
          endpoint_events: endpointEvents
        })
      })

    const listEvents = Effect.fn("Webhooks.listEvents")(function* (
      merchantId: string,
      q: {
        readonly business_ids?: ReadonlyArray<string>
        readonly event_types?: ReadonlyArray<string>
        readonly event_statuses?: ReadonlyArray<string>
        readonly created?: Store.CreatedRange
        readonly limit: number
        readonly starting_after?: string | undefined
        readonly ending_before?: string | undefined
      }
    ) {
      const filters: Array<Store.Filter> = []
      if (q.business_ids?.length) filters.push({ column: "business_id", op: "in", values: q.business_ids })
      if (q.event_types?.length) filters.push({ column: "type", op: "in", values: q.event_types })
      if (q.event_statuses?.length) {
        const matching = yield* Effect.orDie(
          deliveries.list(merchantId, {
            limit: 100,
            filters: [{ column: "status", op: "in", values: q.event_statuses }]
          })
        )
        filters.push({
          column: "id",
          op: "in",
          values: [...new Set(matching.list.map((d) => d.event_id)), "__none__"]
        })
      }
      const page = yield* pageErrors(
        events.list(merchantId, {
          filters,
          limit: q.limit,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
      const list = yield* Effect.forEach(page.list, (e) => eventView(merchantId, e))
      return { has_more: page.has_more, list }
    })

    /** The endpoint's secret, for signing deliveries. */
    const secretOf = Effect.fn("Webhooks.secretOf")(function* (merchantId: string, id: string) {
      return yield* Effect.flatMap(get(merchantId, id), (v) => secrets.decrypt(v.value.secret_ciphertext))
    })

    // ------------------------------------------------------------------ delivery

    /** A merchant's enabled endpoints. */
    const resend = Effect.fn("Webhooks.resend")(function* (merchantId: string, eventId: string) {
      const event = yield* Effect.flatMap(events.get(merchantId, eventId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new Errors.NotFound({ resource: "webhook_event", id: eventId })),
          onSome: (v) => Effect.succeed(v.value)
        })
      )
      yield* dispatch.fanOut({ ...event })
      const existing = yield* Effect.orDie(
        deliveries.list(merchantId, { limit: 100, filters: [{ column: "event_id", op: "in", values: [eventId] }] })
      )
      const merchant = yield* Effect.orDie(merchants.get(merchantId))
      const at = yield* nowOf(merchant)
      yield* Effect.forEach(
        existing.list,
        (d) =>
          Effect.gen(function* () {
            const current = yield* deliveries.get(merchantId, d.id)
            if (Option.isNone(current)) return
            yield* deliveries
              .update(
                Lifecycle.must(
                  Webhook.moveDelivery(current.value.value, "resend", {
                    attempts: 0,
                    first_attempt_at: null,
                    next_attempt_at: at
                  })
                ),
                current.value.version
              )
              .pipe(Effect.catch(() => Effect.void))
            yield* dispatch.deliver(merchantId, d.id)
          }),
        { discard: true, concurrency: 4 }
      )
      return yield* eventView(merchantId, event)
    })

    return {
      create,
      update,
      delete: remove,
      list,
      listEvents,
      secretOf,
      resend
    } as const
  })
}) {
  /** The live implementation: needs `Storage` and the ports it uses. */
  static readonly layer = Layer.effect(this, this.make)
}
