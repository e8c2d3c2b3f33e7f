/**
 * Column helpers shared by the entities (the implementation of `Entities`).
 */
import { DateTime, Result } from "effect"
import * as Money from "../../money/Money.js"

export const ms = (dt: DateTime.Utc) => DateTime.toEpochMillis(dt)
export const minor = (amount: string, currency: string): bigint =>
  Result.match(Money.parse(amount, currency, { allowNegative: true }), {
    onFailure: () => 0n,
    onSuccess: (m) => m.amount
  })
