/**
 * The tax calculator port and its two simple layers (re-exported by `Ports`).
 */
import { Context, Effect, Layer } from "effect"
import * as Invoicing from "../invoices/Invoicing.js"
import type * as Money from "../money/Money.js"
import type * as Tax from "./Tax.js"

/**
 * Taxes: what is due on an invoice's taxable amount (its lines after discounts) for a customer at
 * an address. The engine gives the address it knows (the checkout's billing address, else the
 * customer's); a real tax service may look further. None by default; `TaxRates.table` is the
 * merchant's rate table. Each line's `taxable` is the net the tax is on (for an inclusive tax,
 * `taxable` less the tax: build lines with `Tax.lineOn`).
 *
 * @example
 * const lines = yield* (yield* TaxCalculator).tax({ merchant_id, customer_id, address, taxable })
 * @since 0.1.0
 */
export class TaxCalculator extends Context.Service<
  TaxCalculator,
  {
    readonly tax: (input: {
      readonly merchant_id: string
      readonly customer_id: string
      readonly address: Tax.TaxAddress | null
      readonly taxable: Money.Money
    }) => Effect.Effect<ReadonlyArray<Invoicing.TaxLine>>
  }
>()("@recur/core/TaxCalculator") {}

/**
 * No tax.
 *
 * @since 0.1.0
 */
export const taxNone: Layer.Layer<TaxCalculator> = Layer.succeed(TaxCalculator, {
  tax: () => Effect.succeed([])
})

/**
 * One exclusive rate everywhere, in basis points (2000 = 20 %), rounded once — for tests and
 * examples.
 *
 * @since 0.1.0
 */
export const taxRate = (basisPoints: bigint): Layer.Layer<TaxCalculator> => {
  const fn = Invoicing.flatTax("Tax", basisPoints * 100n)
  return Layer.succeed(TaxCalculator, {
    tax: ({ taxable }) => Effect.succeed(fn(taxable))
  })
}
