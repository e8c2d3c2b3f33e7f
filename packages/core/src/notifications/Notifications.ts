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
import * as Invoice from "../invoices/Invoice.js"
import * as Money from "../money/Money.js"
import { merchantNow, nowOf } from "../kernel/ServiceSupport.js"
import * as Errors from "../kernel/Errors.js"
import * as Store from "../kernel/Store.js"
import * as Merchants from "../tenants/Merchants.js"
import type * as Merchant from "../tenants/Merchant.js"
import * as Portal from "../portal/Portal.js"
import * as Secrets from "../tenants/Secrets.js"
import * as Settings from "../tenants/Settings.js"
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
import { Notifier, type OutgoingMessage } from "./Notifier.js"
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
const NAMED = /^[^<>\r\n,;:"]{0,100}<([^\s@<>]+@[^\s@<>]+\.[^\s@<>]+)>$/

/**
 * Whether a text is an address a message can come from or be answered to:
 * `billing@example.com` or `Acme Billing <billing@example.com>`, no line break.
 *
 * @since 0.1.0
 */
export const isAddress = (s: string): boolean => s.length <= 254 && (ADDRESS.test(s) || NAMED.test(s))

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

const day = (d: DateTime.Utc | null) => (d === null ? null : DateTime.formatIso(d).slice(0, 10))

/**
 * How long the card-update link of an email works: the longest dunning window (retries run up to
 * day 60 after the failed renewal), so a customer who reads the email any day of it can still
 * use it. Following it mints a fresh portal session (an hour, as any).
 *
 * @since 0.1.0
 */
export const CARD_LINK_MS = 60 * 86_400_000

const LINK_PART = /^[A-Za-z0-9_-]{1,64}$/

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
    const secrets = yield* Secrets.Secrets
    const base = (yield* Settings.Settings).publicUrl.replace(/\/+$/, "")
    const now = merchantNow(storage)
    /** Whether this process said it has no notifier (once, at the first message it sets aside). */
    let toldNoNotifier = false
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

    const facts = (merchant: Merchant.Merchant, record: NotificationRecord) =>
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
        // the card-update flow of the portal: a signed link that works for the dunning window
        // and opens a fresh portal session when followed (a merchant that turned the flow off
        // gets none; the invoice page still takes a new card)
        // a failed payment of a subscription that has ended (a stopped decline under a
        // `canceled` final state) says so, with no card to update
        const ended = record.kind === "payment_failed" && sub?.status === "canceled"
        const portalUrl =
          !ended &&
          (record.kind === "payment_failed" || record.kind === "card_expiring") &&
          (yield* portal.settingsOf(record.merchant_id)).payment_method_update
            ? yield* cardLink(record.merchant_id, record.customer_id, invoice?.invoice_id ?? null)
            : null
        const date =
          record.kind === "trial_ending"
            ? day(sub?.current_period_end ?? null)
            : record.kind === "card_expiring"
              ? day(sub?.next_invoice_date ?? sub?.current_period_end ?? null)
              : (record.kind === "invoice_issued" || record.kind === "invoice_past_due") && invoice?.due_date
                ? day(invoice.due_date)
                : day(DateTime.makeUnsafe(record.created_at))
        // the customer's address, else the one its checkout gave (kept on the subscription and invoice)
        const email = customer?.email ?? sub?.email ?? invoice?.customer_email ?? null
        return {
          customer,
          email,
          facts: {
            merchantName: merchant.name,
            customerName: customer?.name ?? null,
            // what it asks or asked for: its amount less the credit notes that reduced it
            amount: invoice !== undefined ? `${Money.format(Invoice.amountDue(invoice))} ${invoice.currency}` : null,
            invoiceNumber: invoice?.number ?? null,
            invoiceUrl: invoice?.hosted_invoice_url ?? null,
            pdfUrl: invoice?.invoice_pdf ?? null,
            portalUrl,
            date,
            ended
          } satisfies Templates.MessageFacts
        }
      })

    const cardLinkText = (merchantId: string, customerId: string, invoiceId: string, expires: number) =>
      `portal-card:${merchantId}:${customerId}:${invoiceId}:${expires}`

    /**
     * The card-update link of an email: `/portal/card/{signature}/{merchant}/{customer}/{invoice
     * or -}/{expiry in Unix seconds}`, working for {@link CARD_LINK_MS} on the merchant's clock
     * (the signature first, where the logs' redaction hides it).
     */
    const cardLink = (merchantId: string, customerId: string, invoiceId: string | null) =>
      Effect.gen(function* () {
        const expires = Math.floor(((yield* now(merchantId)) + CARD_LINK_MS) / 1000)
        const invoice = invoiceId ?? "-"
        const signature = yield* secrets.sign(cardLinkText(merchantId, customerId, invoice, expires))
        return `${base}/portal/card/${[signature, merchantId, customerId, invoice, expires].join("/")}`
      })

    /**
     * Follows an email's card-update link: a fresh portal session on the card form (back to the
     * invoice's page, in the merchant's email language) when the link is rightly signed, not
     * expired on the merchant's clock, its customer not deleted and the flow still on; none
     * otherwise (all look the same to the visitor). No processor is asked.
     */
    const followCardLink = Effect.fn("Notifications.followCardLink")(function* (parts: ReadonlyArray<string>) {
      if (parts.length !== 5 || !parts.every((p) => LINK_PART.test(p))) return Option.none<string>()
      const [signature, merchantId, customerId, invoiceId, expiresText] = parts as [
        string,
        string,
        string,
        string,
        string
      ]
      const expires = Number(expiresText)
      if (!/^\d{1,12}$/.test(expiresText)) return Option.none<string>()
      if (!(yield* secrets.verify(cardLinkText(merchantId, customerId, invoiceId, expires), signature)))
        return Option.none<string>()
      if ((yield* now(merchantId)) >= expires * 1000) return Option.none<string>()
      const merchant = yield* Effect.option(merchants.get(merchantId))
      if (Option.isNone(merchant)) return Option.none<string>()
      const invoice =
        invoiceId !== "-"
          ? Option.getOrUndefined(yield* Effect.orDie(invoices.get(merchantId, invoiceId)))?.value
          : undefined
      const language = merchant.value.notification_settings?.language ?? "en"
      return yield* portal
        .createSession(merchantId, {
          customerId: customerId as Ids.CustomerId,
          returnUrl: Option.fromNullishOr(invoice?.hosted_invoice_url),
          flow: Option.some("payment_method_update"),
          locale: Option.some(localeOf[language])
        })
        .pipe(
          Effect.map((session) => Option.some(session.url)),
          Effect.orElseSucceed(() => Option.none<string>())
        )
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
      // no transport: nothing can ever send it, so it is set aside at once (not retried), and
      // the process says so once, not per message
      if (Option.isNone(notifier)) {
        if (!toldNoNotifier) {
          toldNoNotifier = true
          yield* Effect.logWarning(
            "customer emails are not sent: no notifier is configured; messages are recorded as skipped (no_notifier)"
          ).pipe(Effect.annotateLogs({ event: "recur.notification.no_notifier" }))
        }
        return yield* skip("no_notifier")
      }
      const language = settings.language
      const { customer, email, facts: f } = yield* facts(merchant, record)
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
      const sent = yield* Effect.result(notifier.value.send(message))
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

    return { settingsOf, setSettings, list, deliver, followCardLink } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}
