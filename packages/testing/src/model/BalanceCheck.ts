/**
 * The model test's check of the customer balance ledger (issue 34): after a step, a customer's
 * ledger is consistent — each entry's `ending_balance` the running sum, the stored balance the sum
 * of the entries — and its balance in each currency equals the sum of its subscriptions' shares
 * (`credit_balance`, which the model checks against its own balance): a manual adjustment or a
 * credit note is held as a share too while a subscription bills. With `expected` (the model's
 * credit of the customer's one subscription), the balance must equal it as well.
 */
import { expect } from "@effect/vitest"
import { Entities, type Store } from "@recur/core"
import { Effect } from "effect"

const minor = (text: string) => {
  const negative = text.startsWith("-")
  const [whole, frac = ""] = (negative ? text.slice(1) : text).split(".")
  const value = BigInt(`${whole}${frac}`)
  return { value: negative ? -value : value, scale: frac.length }
}

/** Checks one customer's ledger against itself and its subscriptions' shares. */
export const ledgerMatches = (
  storage: Store.Storage["Service"],
  merchantId: string,
  customerId: string,
  where: () => string,
  expected?: bigint
) =>
  Effect.gen(function* () {
    const entries: Array<Entities.BalanceTransactionRecord> = []
    let after: string | undefined
    for (;;) {
      const page = yield* Effect.orDie(
        storage.repository(Entities.balanceTransaction).list(merchantId, {
          limit: 100,
          filters: [{ column: "customer_id", op: "in", values: [customerId] }],
          ...(after ? { starting_after: after } : {})
        })
      )
      entries.push(...page.list)
      if (!page.has_more) break
      after = page.list.at(-1)!.id
    }
    const sums = new Map<string, bigint>()
    for (const e of entries.reverse()) {
      const sum = (sums.get(e.currency) ?? 0n) + e.amount
      sums.set(e.currency, sum)
      expect(e.ending_balance, `${where()}: ledger entry ${e.id} ending balance`).toBe(sum)
    }
    const balances = yield* Effect.orDie(
      storage.repository(Entities.customerBalance).list(merchantId, {
        limit: 100,
        filters: [{ column: "customer_id", op: "in", values: [customerId] }]
      })
    )
    for (const b of balances.list)
      expect(b.balance, `${where()}: ${customerId} ${b.currency} balance = Σ entries`).toBe(sums.get(b.currency) ?? 0n)
    const subs = yield* Effect.orDie(
      storage.repository(Entities.subscription).list(merchantId, {
        limit: 100,
        filters: [{ column: "customer_id", op: "in", values: [customerId] }]
      })
    )
    const shares = new Map<string, bigint>()
    for (const s of subs.list)
      shares.set(s.currency, (shares.get(s.currency) ?? 0n) + minor(s.subscription.credit_balance).value)
    for (const currency of new Set([...shares.keys(), ...sums.keys()]))
      expect(sums.get(currency) ?? 0n, `${where()}: ${customerId} ${currency} ledger = Σ subscriptions' credit`).toBe(
        shares.get(currency) ?? 0n
      )
    if (expected !== undefined)
      expect(sums.get("USD") ?? 0n, `${where()}: ${customerId} ledger balance = the model's credit`).toBe(expected)
  })
