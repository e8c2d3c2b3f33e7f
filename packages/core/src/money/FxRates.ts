/**
 * The exchange-rate port (re-exported by `Ports`).
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import * as Decimal from "./Decimal.js"

/**
 * Exchange rates: how many units of `target` one unit of `source` buys today.
 *
 * @example
 * const rate = yield* (yield* FxRates).rate("USD", "JPY") // Option.some(Decimal 150.5)
 * @since 0.1.0
 */
export class FxRates extends Context.Service<
  FxRates,
  { readonly rate: (source: string, target: string) => Effect.Effect<Option.Option<Decimal.Decimal>> }
>()("@recur/core/FxRates") {}

/**
 * A static FX table (`{ "USD:JPY": "150.5" }`), the default. Only listed pairs (and
 * identity) answer: an inverse is not derived, since 1/x is rarely an exact decimal.
 *
 * @since 0.1.0
 */
export const fxStatic = (table: Readonly<Record<string, string>>): Layer.Layer<FxRates> =>
  Layer.succeed(FxRates, {
    rate: (source, target) =>
      Effect.sync(() => {
        if (source === target) return Option.some(Decimal.make(1n))
        const text = table[`${source}:${target}`]
        return text === undefined ? Option.none() : Result.getSuccess(Decimal.parse(text))
      })
  })
