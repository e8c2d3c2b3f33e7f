/**
 * The merchants of a model run, made through the engine's services: six plain merchants (3
 * proration policies × 2 credit settings) and a seventh whose renewals wait an hour as drafts, with the flat and usage prices of the model, and two
 * commercial merchants with two products, their prices, the discounts, the tax rates and six
 * customers. Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import { Catalog, Customers, Merchants, TaxRates } from "@recur/core"
import { Effect } from "effect"
import { discountsByRequest } from "../ScenarioKit.js"
import { CDISCOUNTS, type CDiscount, type CMerchant, COUNTRIES, CPRICES, RATES } from "./Commercial.js"
import { ADDON, FLAT, type MMerchant, USAGE, YEARLY } from "./Reference.js"

/** The grace period of the model's merchant whose renewals are drafts first (an hour). */
export const DRAFT_GRACE_SECONDS = 3600

/** The plain merchants, frozen at `start`, each with a product and the model's flat and usage prices. */
export const plainMerchants = (start: number) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog.Catalog
    const merchantsService = yield* Merchants.Merchants
    const merchants: Array<MMerchant> = []
    // the six plain merchants, and one whose renewals wait an hour as drafts (issue 34, 1)
    const kinds = [
      ...(["per_second", "per_day", "fixed_days(30)"] as const).flatMap((policy) =>
        (["refund", "credit_balance"] as const).map((creditMode) => [policy, creditMode, 0] as const)
      ),
      ["per_second", "credit_balance", DRAFT_GRACE_SECONDS] as const
    ]
    for (const [policy, creditMode, grace] of kinds) {
      const { merchant } = yield* merchantsService.create({
        name: `Model ${policy} ${creditMode}${grace > 0 ? " drafts" : ""}`,
        currency: "USD",
        frozen_time: start,
        proration_policy: policy,
        proration_credit: creditMode
      })
      if (grace > 0)
        yield* merchantsService.setBillingSettings(merchant.merchant_id, { invoice_draft_grace_seconds: grace })
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
      // the add-on sold as a second item with some flat subscriptions (issue 33)
      const addon = yield* Effect.map(
        catalog.createPrice(merchant.merchant_id, {
          name: "Add-on",
          product_id: product.product_id,
          currency: "USD",
          billing_type: "recurring",
          price_type: "flat_price",
          price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: ADDON }
        }),
        (p) => p.id
      )
      const yearly = (yield* catalog.createPrice(merchant.merchant_id, {
        name: "Flat yearly",
        product_id: product.product_id,
        currency: "USD",
        billing_type: "recurring",
        price_type: "flat_price",
        price_plan: { billing_cycle_unit: "year", billing_cycle_count: 1, base_price_val: YEARLY }
      })).id
      merchants.push({
        id: merchant.merchant_id,
        policy,
        creditMode,
        flat,
        usage,
        addon,
        yearly,
        grace: grace * 1000,
        now: start,
        subs: []
      })
    }
    return merchants
  })

/** The commercial merchants, frozen at `start`: products A and B, prices, discounts, tax rates and customers. */
export const commercialMerchants = (start: number) =>
  Effect.gen(function* () {
    const catalog = yield* Catalog.Catalog
    const merchantsService = yield* Merchants.Merchants
    const discountsService = yield* discountsByRequest
    const taxRates = yield* TaxRates.TaxRates
    const customersService = yield* Customers.Customers
    const cMerchants: Array<CMerchant> = []
    for (const [policy, creditMode] of [
      ["per_second", "refund"],
      ["per_day", "credit_balance"]
    ] as const) {
      const { merchant } = yield* merchantsService.create({
        name: `Commercial ${policy} ${creditMode}`,
        currency: "USD",
        frozen_time: start,
        proration_policy: policy,
        proration_credit: creditMode
      })
      const mid = merchant.merchant_id
      const products: Record<string, string> = {}
      for (const p of ["A", "B"])
        products[p] = (yield* catalog.createProduct(mid, { product_name: `Product ${p}` })).product_id
      const prices = yield* Effect.forEach(CPRICES, ([p, base]) =>
        Effect.map(
          catalog.createPrice(mid, {
            name: `${p} ${base}`,
            product_id: products[p]!,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", billing_cycle_count: 1, base_price_val: base }
          }),
          (x) => x.id
        )
      )
      const discounts = yield* Effect.forEach(CDISCOUNTS, (d) =>
        Effect.map(
          discountsService.create(mid, {
            name: d.code,
            code: d.code,
            ...("pct" in d
              ? { discount_type: "percentage", percent_off: d.pct }
              : { discount_type: "fixed_amount", amount_off: d.amount }),
            duration: d.cycles === null ? "forever" : d.cycles === 1 ? "once" : "repeating",
            ...(d.cycles !== null && d.cycles > 1 ? { duration_cycles: d.cycles } : {}),
            product_ids: d.products.map((p) => products[p]!),
            ...(d.perCustomer !== null ? { max_redemptions_per_customer: d.perCustomer } : {})
          }),
          (x): CDiscount => ({
            id: x.discount_id,
            code: d.code,
            bp: "pct" in d ? BigInt(d.pct) * 100n : null,
            amount: "amount" in d ? BigInt(d.amount.replace(".", "")) : null,
            cycles: d.cycles,
            products: d.products,
            perCustomer: d.perCustomer
          })
        )
      )
      const cm: CMerchant = {
        id: mid,
        policy,
        creditMode,
        prices,
        discounts,
        rates: new Map(),
        customers: [],
        subs: [],
        now: start
      }
      for (const country of ["DE", "GB", "US"]) {
        const r = RATES[country]!
        const rate = yield* taxRates.create(mid, {
          name: "Tax",
          percentage: r.pct,
          country,
          ...(r.region ? { region: r.region } : {}),
          inclusive: r.inclusive
        })
        cm.rates.set(country, { id: rate.tax_rate_id, units: r.units, inclusive: r.inclusive })
      }
      for (let k = 0; k < 6; k++) {
        const country = COUNTRIES[k % COUNTRIES.length]!
        const payer = `cust-${k}`
        const c = yield* customersService.create(mid, {
          payer_id: payer,
          address:
            country === null ? {} : { country, ...(RATES[country]!.region ? { province: RATES[country]!.region } : {}) }
        })
        cm.customers.push({ id: c.id, payer, country, redeemed: new Map(), subs: [] })
      }
      cMerchants.push(cm)
    }
    return cMerchants
  })
