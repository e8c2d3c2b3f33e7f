/**
 * The shape of the hosted pages' words, one object per language (`./<tag>.ts`). Every language
 * file is typed `Messages`: a key missing in one language is a type error.
 */
import { CheckoutSession } from "@recur/core"

/** The languages the hosted pages speak: the session's `locale` values, the seed's sixteen checkout locales. */
export const LANGUAGES = CheckoutSession.Locale.literals

/** A language the hosted pages speak (a BCP 47 tag, as the session's `locale`). */
export type Language = typeof CheckoutSession.Locale.Type

/** A billing interval's unit. */
export type Unit = "day" | "week" | "month" | "quarter" | "year"

/** The card form's labels (checkout, invoice and portal pages). */
export interface CardWords {
  readonly cardNumber: string
  readonly month: string
  readonly year: string
  readonly cvc: string
  readonly nameOnCard: string
}

/** What the pay routes say whatever the page. */
export interface CommonWords {
  /** Too many pay attempts: try again in `seconds`. */
  readonly tooManyWait: (seconds: number) => string
  /** A payment refused without the processor's reason. */
  readonly paymentFailed: string
  /** Back from 3-D Secure without having finished it. */
  readonly authNotCompleted: string
  /** 3-D Secure failed without the processor's reason. */
  readonly authFailed: string
  /** The processor could not take the payment (an outage, the merchant's keys): nothing charged, not a decline. */
  readonly unavailable: string
}

/** The hosted checkout page's words. */
export interface CheckoutWords {
  readonly checkout: string
  readonly soldBy: string
  readonly payment: string
  readonly quantity: string
  readonly decrease: string
  readonly increase: string
  readonly dueToday: string
  readonly thenLabel: string
  readonly billed: string
  /** A metered line of several: nothing due now, billed by usage at each period's end. */
  readonly byUsage: string
  readonly trial: string
  readonly email: string
  readonly pay: string
  readonly cancel: string
  readonly agree: string
  readonly terms: string
  readonly privacy: string
  readonly and: string
  readonly paid: string
  readonly expired: string
  readonly notFound: string
  readonly complete: string
  readonly closePage: string
  /** The payment's outcome is not known yet (back from 3-D Secure, the processor not answering yet). */
  readonly confirming: string
  readonly processing: string
  readonly processingDetail: string
  readonly tooMany: string
  readonly discountCode: string
  readonly apply: string
  readonly discountApplied: string
  readonly includesTax: string
  /** A line item charged once, with the first invoice, beside the subscription's items. */
  readonly oneTime: string
}

/** An invoice's states as a reader reads them. */
export type InvoiceStatuses = {
  readonly open: string
  readonly pending: string
  readonly retrying: string
  readonly success: string
  readonly failed: string
  readonly refunded: string
  readonly partially_refunded: string
  readonly void: string
  readonly draft: string
  readonly uncollectible: string
}

/** The invoice page's and PDF's words. */
export interface InvoiceWords {
  readonly invoice: string
  readonly creditNote: string
  readonly number: string
  readonly issued: string
  /** When a sent invoice (collection method `send_invoice`) is due. */
  readonly due: string
  readonly paidAt: string
  readonly carried: string
  readonly status: string
  readonly from: string
  readonly billTo: string
  readonly description: string
  readonly period: string
  readonly quantity: string
  readonly amount: string
  readonly subtotal: string
  /** The customer's balance an invoice applied (a credit taken off the amount due). */
  readonly appliedBalance: string
  readonly discount: string
  readonly tax: string
  readonly included: string
  readonly total: string
  readonly amountDue: string
  /** Credit notes that reduced an unpaid invoice (a negative total row). */
  readonly creditNotes: string
  readonly refunded: string
  readonly pay: string
  readonly download: string
  readonly notFound: string
  readonly statuses: InvoiceStatuses
}

/** A subscription's states as its customer reads them. */
export type SubscriptionStatuses = {
  readonly init: string
  readonly trial: string
  readonly active: string
  readonly canceled: string
  readonly incomplete: string
  readonly paused: string
  readonly past_due: string
  readonly unpaid: string
}

/** The customer portal's words. */
export interface PortalWords {
  readonly title: string
  readonly subscriptions: string
  readonly invoices: string
  readonly noSubscriptions: string
  readonly noInvoices: string
  readonly statuses: SubscriptionStatuses
  readonly nextInvoice: (date: string, amount: string) => string
  readonly paidWith: (card: string) => string
  readonly card: (brand: string, last4: string, month: number, year: number) => string
  readonly checkoutCard: string
  readonly updateCard: string
  readonly saveCard: string
  readonly endsOn: (date: string) => string
  readonly keep: string
  readonly cancel: string
  readonly changePlan: string
  readonly newPlan: string
  readonly review: string
  readonly switchTitle: (from: string, to: string) => string
  readonly unusedTime: (name: string) => string
  readonly remainingTime: (name: string) => string
  readonly discountEnds: (code: string) => string
  readonly tax: string
  readonly dueNow: string
  readonly refunded: string
  readonly credited: string
  readonly nothingNow: string
  /** An interval switch: the new period's line, when it starts, and the credit paying all of it. */
  readonly newPeriod: (name: string, date: string) => string
  readonly newPeriodStarts: (date: string) => string
  readonly creditPaysPeriod: string
  readonly confirm: string
  readonly back: string
  readonly backTo: (merchant: string) => string
  readonly columns: readonly [number: string, date: string, status: string, amount: string]
  readonly view: string
  readonly expired: string
  readonly expiredHint: string
  readonly noSuchSubscription: string
  readonly notAvailable: string
  readonly quoteMoved: string
  /** The portal's quantity change: the form's summary and label, a pending quantity, the preview. */
  readonly changeQuantity: string
  readonly quantityOf: (name: string) => string
  readonly pendingQuantity: (quantity: string, date: string) => string
  readonly quantityTitle: (name: string, from: string, to: string) => string
  readonly quantityApplies: (date: string) => string
  readonly nextInvoiceNow: string
  readonly nextInvoiceAfter: string
  /** The invoices still owed that the customer can pay now, each with a Pay link to its page. */
  readonly toPay: string
  /** The Pay link's accessible name: which invoice it pays. */
  readonly payInvoice: (number: string) => string
  /** A retrying invoice: when dunning charges the card again. */
  readonly nextAttempt: (date: string) => string
  /** The customer's balance section (filled by the customer balance ledger). */
  readonly balance: string
  /** Under a positive balance: what the credit does. */
  readonly balanceCredit: string
  /** Under a negative balance: what is owed and when it is charged. */
  readonly balanceOwed: string
  /** The current period's usage of a subscription's metric items (issue 35). */
  readonly usage: string
  /** Its columns: the item and metric, the value so far, the amount so far. */
  readonly usageColumns: readonly [string, string, string]
  /** A sent invoice's due date in the invoices to pay. */
  readonly dueOn: (date: string) => string
  /** The heading of the customer's prepaid credits (its active credit grants). */
  readonly credits: string
  /** A credit grant's expiry date. */
  readonly creditExpires: (date: string) => string
  /** A credit grant that never expires. */
  readonly creditNoExpiry: string
}

/** Everything the hosted pages say in one language. */
export interface Messages {
  /** The writing direction (`rtl` for Arabic). */
  readonly dir: "ltr" | "rtl"
  /** `every month`, `alle 3 Monate`: how often a price bills. */
  readonly every: (unit: Unit, count: number) => string
  /** `14 days`, `14 Tage`: a trial's length. */
  readonly duration: (unit: Unit, count: number) => string
  /** A monthly price's billing day, from its billing cycle anchor: `on the 1st of each month`. */
  readonly onDay: (day: number) => string
  /** An interval from the first anchored renewal's date: `every year from 1 Feb 2027`. */
  readonly from: (every: string, date: string) => string
  readonly card: CardWords
  readonly common: CommonWords
  readonly checkout: CheckoutWords
  readonly invoice: InvoiceWords
  readonly portal: PortalWords
}

/** Plural forms by `Intl.PluralRules` category (`other` always; the others where the language has them). */
export interface Forms {
  readonly zero?: string
  readonly one?: string
  readonly two?: string
  readonly few?: string
  readonly many?: string
  readonly other: string
}

/** The form of `forms` a count takes in `language`. */
export const plural = (language: Language, count: number, forms: Forms): string =>
  forms[new Intl.PluralRules(language).select(count)] ?? forms.other
