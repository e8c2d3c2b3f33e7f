/**
 * Customer notifications: the merchant's settings, and the sending of the messages the outbox
 * holds (`NotificationOutbox` writes them with their causes). The worker sends each message
 * (work items of kind `notification`): rendered from the facts of its cause as they are now,
 * with fresh links, through the `Notifier` port; marked `sent` once taken. A failed send is
 * retried by the worker with backoff; a crash between the send and the mark sends it again
 * (at least once), under the same `Message-ID`.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option } from "effect"
import * as Entities from "../kernel/Entities.js"
import { nowOf } from "../kernel/ServiceSupport.js"
import * as Errors from "../kernel/Errors.js"
import * as Store from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Portal from "../portal/Portal.js"
import type * as Ids from "../kernel/Ids.js"
import {
  allKinds,
  moveNotification,
  notification,
  type NotificationKind,
  NotificationLanguage,
  type NotificationRecord,
  NotificationSettings,
  NotificationKind as Kind
} from "./Notification.js"
import { Notifier, NotifierError, type OutgoingMessage } from "./Notifier.js"
import * as Templates from "./Templates.js"

/**
 * A change of the merchant's notification settings: `reset` turns them off and forgets them;
 * otherwise the fields given change and the others keep their value (a first change needs a
 * `sender`).
 *
 * @since 0.1.0
 */
export type SettingsCommand =
  | { readonly reset: true }
  | {
      readonly reset?: false
      readonly enabled?: boolean | undefined
      readonly sender?: string | undefined
      readonly reply_to?: string | null | undefined
      readonly messages?: ReadonlyArray<string> | undefined
      readonly language?: string | undefined
    }

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/
const NAMED = /^[^<>\r\n]{0,100}<([^\s@<>]+@[^\s@<>]+\.[^\s@<>]+)>$/

/**
 * Whether a text is an address a message can come from or be answered to:
 * `billing@example.com` or `Acme Billing <billing@example.com>`, no line break.
 *
 * @since 0.1.0
 */
export const isAddress = (s: string): boolean => s.length <= 254 && (ADDRESS.test(s) || NAMED.test(s.trim()))

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

const day = (d: DateTime.Utc | null) => (d === null ? null : DateTime.formatIso(d).slice(0, 10))

const localeOf: Record<NotificationLanguage, "en-US" | "de-DE" | "fr-FR"> = {
  en: "en-US",
  de: "de-DE",
  fr: "fr-FR"
}

/**
 * The notifications service.
 *
 * @since 0.1.0
 */
export class Notifications extends Context.Service<Notifications>()("@recur/core/Notifications", {
  make: Effect.gen(function* () {
    const storage = yield* Store.Storage
    const merchants = yield* Merchants.Merchants
    const portal = yield* Portal.Portal
    const notifier = yield* Effect.serviceOption(Notifier)
    const outbox = storage.repository(notification)
    const customers = storage.repository(Entities.customer)
    const invoices = storage.repository(Entities.invoice)
    const subs = storage.repository(Entities.subscription)

    /** The merchant's notification settings (`null`: none are sent). */
    const settingsOf = Effect.fn("Notifications.settingsOf")(function* (merchantId: string) {
      return (yield* merchants.get(merchantId)).notification_settings
    })

    /** Changes the merchant's notification settings; returns them. */
    const setSettings = Effect.fn("Notifications.setSettings")(function* (
      merchantId: string,
      command: SettingsCommand
    ) {
      if (command.reset === true) {
        yield* merchants.setNotificationSettings(merchantId, null)
        return null
      }
      const current = yield* settingsOf(merchantId)
      const sender = command.sender ?? current?.sender
      if (sender === undefined) return yield* invalid("sender", "required when notifications are first set")
      if (!isAddress(sender)) return yield* invalid("sender", "must be an email address, optionally with a name")
      const replyTo = command.reply_to !== undefined ? command.reply_to : (current?.reply_to ?? null)
      if (replyTo !== null && !isAddress(replyTo)) return yield* invalid("reply_to", "must be an email address")
      const messages = command.messages ?? current?.messages ?? allKinds
      for (const m of messages)
        if (!(Kind.literals as ReadonlyArray<string>).includes(m))
          return yield* invalid("messages", `unknown message "${m}" (one of ${Kind.literals.join(", ")})`)
      if (new Set(messages).size !== messages.length) return yield* invalid("messages", "each message once")
      const language = command.language ?? current?.language ?? "en"
      if (!(NotificationLanguage.literals as ReadonlyArray<string>).includes(language))
        return yield* invalid("language", `one of ${NotificationLanguage.literals.join(", ")}`)
      const next = new NotificationSettings({
        enabled: command.enabled ?? current?.enabled ?? true,
        sender,
        reply_to: replyTo,
        messages: messages as ReadonlyArray<NotificationKind>,
        language: language as NotificationLanguage
      })
      yield* merchants.setNotificationSettings(merchantId, next)
      return next
    })

    /** The merchant's messages, newest first (for operators and tests). */
    const list = Effect.fn("Notifications.list")(function* (merchantId: string, options?: { readonly limit?: number }) {
      const page = yield* Effect.orDie(outbox.list(merchantId, { limit: options?.limit ?? 100 }))
      return page.list
    })

    const facts = (merchant: Merchant.Merchant, record: NotificationRecord, language: NotificationLanguage) =>
      Effect.gen(function* () {
        const customer = Option.getOrUndefined(yield* customers.get(record.merchant_id, record.customer_id))?.value
        const invoice =
          record.invoice_id !== null
            ? Option.getOrUndefined(yield* invoices.get(record.merchant_id, record.invoice_id))?.value
            : record.trade_id !== null
              ? Option.getOrUndefined(yield* invoices.findBy(record.merchant_id, "trade_id", record.trade_id))?.value
              : undefined
        const subscriptionId = record.subscription_id ?? invoice?.subscription_id ?? null
        const sub =
          subscriptionId !== null
            ? Option.getOrUndefined(yield* subs.get(record.merchant_id, subscriptionId))?.value.subscription
            : undefined
        // the card-update flow of the portal, a fresh link for this message (a merchant that
        // turned the flow off gets none; the invoice page still takes a new card)
        const portalUrl =
          record.kind === "payment_failed" || record.kind === "card_expiring"
            ? yield* portal
                .createSession(record.merchant_id, {
                  customerId: record.customer_id as Ids.CustomerId,
                  returnUrl: Option.fromNullishOr(invoice?.hosted_invoice_url),
                  flow: Option.some("payment_method_update"),
                  locale: Option.some(localeOf[language])
                })
                .pipe(
                  Effect.map((s) => s.url),
                  Effect.orElseSucceed(() => null)
                )
            : null
        const date =
          record.kind === "trial_ending"
            ? day(sub?.current_period_end ?? null)
            : record.kind === "card_expiring"
              ? day(sub?.next_invoice_date ?? sub?.current_period_end ?? null)
              : day(DateTime.makeUnsafe(record.created_at))
        // the customer's address, else the one its checkout gave (kept on the subscription and invoice)
        const email = customer?.email ?? sub?.email ?? invoice?.customer_email ?? null
        return {
          customer,
          email,
          facts: {
            merchantName: merchant.name,
            customerName: customer?.name ?? null,
            amount: invoice !== undefined ? `${invoice.amount} ${invoice.currency}` : null,
            invoiceNumber: invoice?.number ?? null,
            invoiceUrl: invoice?.hosted_invoice_url ?? null,
            pdfUrl: invoice?.invoice_pdf ?? null,
            portalUrl,
            date
          } satisfies Templates.MessageFacts
        }
      })

    const save = (next: NotificationRecord, version: number) =>
      outbox
        .update(next, version)
        .pipe(
          Effect.asVoid,
          Effect.catchTags({ VersionConflict: () => Effect.void, UniqueViolation: () => Effect.void })
        )

    /**
     * Sends one message of the outbox if it is still pending; returns its status afterwards.
     * Fails (for the worker to retry later) when the notifier did not take it.
     */
    const deliver = Effect.fn("Notifications.deliver")(function* (merchantId: string, id: string) {
      const found = yield* outbox.get(merchantId, id)
      if (Option.isNone(found)) return "missing" as const
      const record = found.value.value
      if (record.status !== "pending") return record.status
      const merchant = yield* merchants.get(merchantId)
      const settings = merchant.notification_settings
      const skip = (reason: string) =>
        Effect.as(
          save(moveNotification(record, "skip", { last_error: reason }), found.value.version),
          "skipped" as const
        )
      if (settings === null || !settings.enabled || !settings.messages.includes(record.kind))
        return yield* skip("notifications turned off")
      const language = settings.language
      const { customer, email, facts: f } = yield* facts(merchant, record, language)
      if (customer === undefined || customer.deleted_at !== null || email === null)
        return yield* skip("the customer has no email address")
      const rendered = Templates.render(record.kind, language, f)
      const message: OutgoingMessage = {
        messageId: `<${record.id}@recur>`,
        from: settings.sender,
        replyTo: settings.reply_to,
        to: email,
        subject: rendered.subject,
        html: rendered.html,
        text: rendered.text,
        language
      }
      const sent = yield* Effect.result(
        Option.isSome(notifier)
          ? notifier.value.send(message)
          : Effect.fail(new NotifierError({ reason: "unavailable", message: "no notifier is configured" }))
      )
      const attempts = record.attempts + 1
      // ids and kinds only: the message holds signed links
      const log = {
        event: "recur.notification.attempt",
        merchant_id: merchantId,
        notification_id: id,
        kind: record.kind,
        attempt: attempts
      }
      if (sent._tag === "Failure") {
        yield* save(
          { ...record, attempts, last_error: `${sent.failure.reason}: ${sent.failure.message}` },
          found.value.version
        )
        yield* Effect.logWarning("notification not sent").pipe(
          Effect.annotateLogs({ ...log, outcome: "failed", error: sent.failure.reason })
        )
        return yield* sent.failure
      }
      const at = yield* nowOf(merchant)
      yield* save(
        moveNotification(record, "sent", { attempts, last_error: null, recipient: email, sent_at: at }),
        found.value.version
      )
      yield* Effect.logInfo("notification sent").pipe(Effect.annotateLogs({ ...log, outcome: "sent" }))
      return "sent" as const
    })

    return { settingsOf, setSettings, list, deliver } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
