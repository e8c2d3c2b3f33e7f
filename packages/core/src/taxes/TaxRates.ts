/**
 * The merchant's tax rates — created, listed, read and archived — and the table adapter of the
 * `TaxCalculator` port that applies them: at a customer's address, the merchant's active rate of
 * that country and region, else of the whole country, else a rate configured for every merchant
 * (the server's `RECUR_TAX_RATES`, the facade's `taxRates`). Replace the adapter with a tax
 * service's by providing another `Ports.TaxCalculator` layer.
 *
 * @example
 * const rate = yield* (yield* TaxRates).create(merchantId, { name: "VAT", percentage: "19", country: "DE", inclusive: true })
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import type { Metadata } from "../kernel/Common.js"
import * as Entities from "../kernel/Entities.js"
import * as Errors from "../kernel/Errors.js"
import * as Ids from "../kernel/Ids.js"
import { emitAll, merchantNow } from "../kernel/ServiceSupport.js"
import { maxItems, pageErrors } from "../kernel/Paging.js"
import * as Invoicing from "../invoices/Invoicing.js"
import * as Lifecycle from "../kernel/Lifecycle.js"
import * as Merchants from "../tenants/Merchants.js"
import * as Ports from "../kernel/Ports.js"
import type * as Store from "../kernel/Store.js"
import { Storage } from "../kernel/Store.js"
import * as Tax from "./Tax.js"
import type * as CheckoutSession from "../checkout/CheckoutSession.js"
import type { StorageService } from "../kernel/ServiceSupport.js"
import * as Money from "../money/Money.js"

/**
 * A new tax rate: its name, percentage, jurisdiction (country, and region or the whole country)
 * and whether prices include it — checked by {@link check} when created. Also one entry of a
 * configured table (the server's `RECUR_TAX_RATES`, the facade's `taxRates`). The merchant API's
 * body (the contract's `RequestBodies.TaxRateCommand`) has these very fields and is taken as is.
 *
 * @since 0.1.0
 */
export interface TaxRateCommand {
  readonly name?: string | undefined
  /** 0 to 100, at most 4 decimals, as text ("19", "8.875"). */
  readonly percentage?: string | undefined
  /** ISO 3166-1 alpha-2 ("DE"). */
  readonly country?: string | undefined
  /** The subdivision ("CA" or "US-CA"); omitted for the whole country. */
  readonly region?: string | undefined
  /** Whether prices already include it (default false: it is added). */
  readonly inclusive?: boolean | undefined
  readonly metadata?: Metadata | undefined
}

/**
 * Tax rate list filters.
 *
 * @since 0.1.0
 */
export interface ListTaxRates {
  readonly status?: ReadonlyArray<Lifecycle.TaxRateStatus>
  readonly countries?: ReadonlyArray<string>
  readonly created?: Store.CreatedRange | undefined
  readonly limit?: number | undefined
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/**
 * A rate checked and normalised: what the table applies.
 *
 * @since 0.1.0
 */
export interface Rate {
  readonly name: string
  readonly units: bigint
  readonly percentage: string
  readonly country: string
  readonly region: string | null
  readonly inclusive: boolean
}

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

/**
 * Checks a tax rate's fields, each refusal naming its field: a name of 1 to 100 characters, a percentage
 * of 0 to 100 with at most 4 decimals, a two-letter country, an optional region code.
 *
 * @since 0.1.0
 */
export const check = (input: TaxRateCommand): Result.Result<Rate, Errors.InvalidParameter> => {
  const name = input.name?.trim() ?? ""
  if (name === "" || name.length > 100) return Result.fail(invalid("name", "is required (1 to 100 characters)"))
  const units = input.percentage === undefined ? undefined : Tax.parsePercentage(input.percentage)
  if (units === undefined)
    return Result.fail(invalid("percentage", "must be a number from 0 to 100 with at most 4 decimals, as a string"))
  const country = input.country === undefined ? undefined : Tax.normalCountry(input.country)
  if (country === undefined)
    return Result.fail(invalid("country", "must be an ISO 3166-1 alpha-2 country code (two letters)"))
  let region: string | null = null
  if (input.region !== undefined) {
    const r = Tax.normalRegion(input.region, country)
    if (r === undefined)
      return Result.fail(invalid("region", "must be a subdivision code of 1 to 3 letters or digits (CA or US-CA)"))
    region = r
  }
  if (input.inclusive !== undefined && typeof input.inclusive !== "boolean")
    return Result.fail(invalid("inclusive", "must be true or false"))
  return Result.succeed({
    name,
    units,
    percentage: Tax.formatPercentage(units),
    country,
    region,
    inclusive: input.inclusive ?? false
  })
}

/**
 * Checks a configured table (the server's `RECUR_TAX_RATES`, the facade's `taxRates`): every
 * entry as {@link check} does, at most one per country and region; the failing entry's index is
 * in the parameter (`tax_rates[2].percentage`).
 *
 * @since 0.1.0
 */
export const checkTable = (
  entries: ReadonlyArray<TaxRateCommand>
): Result.Result<ReadonlyArray<Rate>, Errors.InvalidParameter> => {
  const out: Array<Rate> = []
  const seen = new Set<string>()
  for (const [i, entry] of entries.entries()) {
    const checked = check(entry)
    if (Result.isFailure(checked))
      return Result.fail(invalid(`tax_rates[${i}].${checked.failure.param}`, checked.failure.reason))
    const key = Tax.jurisdiction(checked.success)
    if (seen.has(key)) return Result.fail(invalid(`tax_rates[${i}]`, `a second rate for ${key}`))
    seen.add(key)
    out.push(checked.success)
  }
  return Result.succeed(out)
}

/** The tax line of a rate on a taxable amount. */
const lineOf = (
  rate: Rate & { readonly tax_rate_id: string | null },
  taxable: Invoicing.TaxLine["taxable"]
): Invoicing.TaxLine => ({
  tax_rate_id: rate.tax_rate_id,
  name: rate.name,
  percentage: rate.percentage,
  country: rate.country,
  region: rate.region,
  inclusive: rate.inclusive,
  ...Tax.lineOn(taxable, rate.units, rate.inclusive)
})

const rateOf = (t: Tax.TaxRate): Rate & { readonly tax_rate_id: string } => ({
  tax_rate_id: t.tax_rate_id,
  name: t.name,
  units: Tax.parsePercentage(t.percentage) ?? 0n,
  percentage: t.percentage,
  country: t.country,
  region: t.region,
  inclusive: t.inclusive
})

/**
 * The table adapter of `Ports.TaxCalculator`: the merchant's active rate for the address (region
 * before country), else the `configured` table's, else no tax. Needs `Storage`.
 *
 * @example
 * Layer.provide(TaxRates.table(Result.getOrThrow(TaxRates.checkTable([{ name: "VAT", percentage: "20", country: "GB" }]))), storage)
 * @since 0.1.0
 */
export const table = (configured: ReadonlyArray<Rate> = []): Layer.Layer<Ports.TaxCalculator, never, Storage> =>
  Layer.effect(
    Ports.TaxCalculator,
    Effect.gen(function* () {
      const storage = yield* Storage
      const rates = storage.repository(Entities.taxRate)
      const fallback = configured.map((r) => ({ ...r, tax_rate_id: null, status: "active" as const }))
      return {
        tax: ({ merchant_id, address, taxable }) =>
          Effect.gen(function* () {
            if (address === null) return []
            const page = yield* Effect.orDie(
              rates.list(merchant_id, {
                filters: [
                  { column: "status", op: "in", values: ["active"] },
                  { column: "country", op: "in", values: [address.country] }
                ],
                limit: 100
              })
            )
            const own = Tax.choose(page.list, address)
            if (own !== undefined) return [lineOf(rateOf(own), taxable)]
            const configuredRate = Tax.choose(fallback, address)
            return configuredRate !== undefined ? [lineOf(configuredRate, taxable)] : []
          })
      }
    })
  )

/**
 * The tax rates service.
 *
 * @since 0.1.0
 */
export class TaxRates extends Context.Service<TaxRates>()("@recur/core/TaxRates", {
  make: Effect.gen(function* () {
    const storage = yield* Storage
    const merchants = yield* Merchants.Merchants
    const rates = storage.repository(Entities.taxRate)
    const now = merchantNow(storage)

    const getRecord = (merchantId: string, id: string) =>
      Effect.flatMap(rates.get(merchantId, id), (o) =>
        Option.isSome(o) ? Effect.succeed(o.value) : Effect.fail(new Errors.NotFound({ resource: "tax_rate", id }))
      )

    /**
     * Creates a tax rate; emits `v2.tax_rate.created`. A second active rate for the same country
     * and region is refused (`DuplicateResource`): archive the old one first.
     */
    const create = Effect.fn("TaxRates.create")(function* (merchantId: string, command: TaxRateCommand) {
      yield* merchants.get(merchantId)
      const rate = yield* Effect.fromResult(check(command))
      const at = yield* now(merchantId)
      const record = new Tax.TaxRate({
        tax_rate_id: yield* Ids.make(Ids.prefixes.taxRate),
        merchant_id: merchantId,
        name: rate.name,
        percentage: rate.percentage,
        country: rate.country,
        region: rate.region,
        inclusive: rate.inclusive,
        status: Lifecycle.taxRate.initial,
        metadata: command.metadata ?? {},
        created_at: DateTime.makeUnsafe(at),
        archived_at: null
      })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* Effect.catchTag(rates.insert(record), "UniqueViolation", () =>
            Effect.fail(new Errors.DuplicateResource({ resource: "tax_rate", param: "region" }))
          )
          yield* emitAll(storage, Lifecycle.taxRate.createEvents, {
            merchant_id: merchantId,
            business_id: record.tax_rate_id,
            schema: Tax.TaxRate,
            data: record,
            at
          })
        })
      )
      return record
    })

    /** One tax rate of this merchant. */
    const get = Effect.fn("TaxRates.get")(function* (merchantId: string, id: string) {
      return yield* Effect.map(getRecord(merchantId, id), (v) => v.value)
    })

    /** The merchant's tax rates, newest first, by status and country. */
    const list = Effect.fn("TaxRates.list")(function* (merchantId: string, q: ListTaxRates) {
      yield* maxItems("country", q.countries, 100)
      const filters: Array<Store.Filter> = []
      if (q.status?.length) filters.push({ column: "status", op: "in", values: q.status })
      if (q.countries?.length)
        filters.push({ column: "country", op: "in", values: q.countries.map((c) => c.trim().toUpperCase()) })
      return yield* pageErrors(
        rates.list(merchantId, {
          filters,
          limit: q.limit ?? 10,
          starting_after: q.starting_after,
          ending_before: q.ending_before,
          ...(q.created ? { created: q.created } : {})
        })
      )
    })

    /**
     * Archives a tax rate: no new invoice uses it (issued ones keep their tax lines); emits
     * `v2.tax_rate.archived`. Archiving twice is a `StateConflict`.
     */
    const archive = Effect.fn("TaxRates.archive")(function* (merchantId: string, id: string) {
      const current = yield* getRecord(merchantId, id)
      const at = yield* now(merchantId)
      const moved = Tax.move(current.value, "archive", { archived_at: DateTime.makeUnsafe(at) })
      if (Result.isFailure(moved))
        return yield* new Errors.StateConflict({
          resource: "tax_rate",
          id,
          state: current.value.status,
          reason: "it is already archived"
        })
      yield* storage.withTransaction(
        Effect.gen(function* () {
          yield* rates.update(moved.success.value, current.version).pipe(
            Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
            Effect.catchTag("VersionConflict", () =>
              Effect.fail(new Errors.ConcurrentUpdate({ resource: "tax_rate", id }))
            )
          )
          yield* emitAll(storage, moved.success.events, {
            merchant_id: merchantId,
            business_id: id,
            schema: Tax.TaxRate,
            data: moved.success.value,
            at
          })
        })
      )
      return moved.success.value
    })

    return { create, get, list, archive } as const
  })
}) {
  /** The live implementation. */
  static readonly layer = Layer.effect(this, this.make)
}

// ------------------------------------------------------------------ taxing drafts and amounts at the customer's address

/**
 * Where the engine taxes a customer: the checkout's billing address when it names a country,
 * else the customer's stored address; null when neither does.
 */
export const taxAddressOf = (
  storage: StorageService,
  merchantId: string,
  customerId: string | null,
  billing?: { readonly country_code?: string | undefined; readonly province_code?: string | undefined } | null
) =>
  Effect.gen(function* () {
    const fromBilling = billing ? Tax.addressOf(billing.country_code, billing.province_code) : null
    if (fromBilling !== null || customerId === null) return fromBilling
    const found = yield* Effect.orDie(storage.repository(Entities.customer).get(merchantId, customerId))
    const address = Option.isSome(found) ? found.value.value.address : null
    return address ? Tax.addressOf(address.country, address.province) : null
  })

/**
 * An amount (already discounted) with its tax at the customer's address, as one invoice line
 * would carry it: `total` adds exclusive taxes, `tax` counts every tax. What a checkout session
 * shows before the payer pays.
 */
export const taxOnAmount =
  (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  (
    merchantId: string,
    customerId: string | null,
    billing: CheckoutSession.CheckoutSession["billing_address"] | undefined,
    amount: Money.Money
  ) =>
    Effect.gen(function* () {
      if (amount.amount <= 0n) return { total: amount, tax: Money.zero(amount.currency) }
      const address = yield* taxAddressOf(storage, merchantId, customerId, billing)
      const lines = yield* taxes.tax({
        merchant_id: merchantId,
        customer_id: customerId ?? "",
        address,
        taxable: amount
      })
      const sum = (ls: ReadonlyArray<Invoicing.TaxLine>) => ls.reduce((a, t) => a + t.amount.amount, 0n)
      return {
        total: Money.make(amount.amount + sum(lines.filter((t) => !t.inclusive)), amount.currency),
        tax: Money.make(sum(lines), amount.currency)
      }
    })

/**
 * A pure draft plus tax from the injected calculator, at the customer's tax address (see
 * {@link taxAddressOf}). The draft's discounts stay (as the amounts they came to) and
 * `extraDiscounts` (the subscription's, in the draft's currency) apply after them; tax is on the
 * discounted amount; then customer credit.
 */
export const withTax =
  (taxes: Ports.TaxCalculator["Service"], storage: StorageService) =>
  (
    draft: Invoicing.Draft,
    merchantId: string,
    customerId: string,
    creditBalance?: Money.Money,
    extraDiscounts: ReadonlyArray<Invoicing.DiscountRule> = [],
    where: {
      /** The checkout's billing address (first payments). */
      readonly billing?: CheckoutSession.CheckoutSession["billing_address"]
      /** The address, already resolved (a renewal batch reads its customers at once). */
      readonly address?: Tax.TaxAddress | null
    } = {}
  ) =>
    Effect.gen(function* () {
      const discounts: ReadonlyArray<Invoicing.DiscountRule> = [
        ...draft.discounts.map((d) =>
          Invoicing.DiscountRule.Amount({
            discount_id: d.discount_id,
            discount_code: d.discount_code,
            amount: d.amount
          })
        ),
        ...extraDiscounts
      ]
      const untaxed = Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: draft.lines,
        discounts
      })
      const taxable = Invoicing.taxableOf(untaxed)
      const address =
        where.address !== undefined
          ? where.address
          : yield* taxAddressOf(storage, merchantId, customerId, where.billing)
      const lines =
        taxable > 0n
          ? yield* taxes.tax({
              merchant_id: merchantId,
              customer_id: customerId,
              address,
              taxable: Money.make(taxable, draft.currency)
            })
          : []
      return Invoicing.total({
        invoice_type: draft.invoice_type,
        cycle_index: draft.cycle_index,
        currency: draft.currency,
        lines: draft.lines,
        discounts,
        tax: () => lines,
        ...(creditBalance ? { creditBalance } : {}),
        ...(Option.isSome(draft.original_invoice_id) ? { original_invoice_id: draft.original_invoice_id.value } : {})
      })
    })
