/**
 * The facade's `creditGrants` group (prepaid credits: as `…/credit_grants`, `…/credit_top_ups`)
 * and `customers.autoTopUp` (as `POST /api/v1/customers/{customer_id}/auto_top_up`).
 *
 * @since 0.1.0
 */
import { CreditGrantRequests } from "@recur/contract"
import { CreditGrant, CreditGrants } from "@recur/core"
import { Effect } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, id, json, type Kit, page, pageJson } from "./Kit.js"
import type { Answer } from "./Types.js"

/** @since 0.1.0 */
export type CreditGrantJson = Answer<typeof CreditGrant.CreditGrant>
/** @since 0.1.0 */
export type AutoTopUpJson = Answer<typeof CreditGrant.AutoTopUp>
/** @since 0.1.0 */
export type CreateCreditGrantInput = typeof CreditGrantRequests.CreateCreditGrant.Encoded
/** @since 0.1.0 */
export type CreateTopUpInput = typeof CreditGrantRequests.CreateTopUp.Encoded & {
  /** The charge's idempotency key (REST's `Request-Id`): a retry answers the first outcome. */
  readonly request_id?: string
}
/** @since 0.1.0 */
export type SetAutoTopUpInput = typeof CreditGrantRequests.SetAutoTopUp.Encoded

/**
 * The `creditGrants` group of the facade.
 *
 * @since 0.1.0
 */
export type CreditGrantsClient = BillingClient["creditGrants"]

/** `creditGrants`. @since 0.1.0 */
export const creditGrants = ({ run }: Kit<Services>): CreditGrantsClient => ({
  create: (merchantId, customerId, input) =>
    run(
      Effect.all([id("customer_id", customerId), decode(CreditGrantRequests.CreateCreditGrant, input)]).pipe(
        Effect.flatMap(([c, i]) =>
          CreditGrants.CreditGrants.use((s) => s.create(merchantId, { ...i, customer_id: c }))
        ),
        Effect.map(json(CreditGrant.CreditGrant))
      )
    ),
  list: (merchantId, customerId, input = {}) =>
    run(
      Effect.all([id("customer_id", customerId), page(input)]).pipe(
        Effect.flatMap(([c, p]) => CreditGrants.CreditGrants.use((s) => s.list(merchantId, c, p))),
        Effect.map(pageJson(CreditGrant.CreditGrant))
      )
    ),
  get: (merchantId, grantId) =>
    run(
      id("credit_grant_id", grantId).pipe(
        Effect.flatMap((g) => CreditGrants.CreditGrants.use((s) => s.get(merchantId, g))),
        Effect.map(json(CreditGrant.CreditGrant))
      )
    ),
  void: (merchantId, grantId) =>
    run(
      id("credit_grant_id", grantId).pipe(
        Effect.flatMap((g) => CreditGrants.CreditGrants.use((s) => s.void(merchantId, g))),
        Effect.map(json(CreditGrant.CreditGrant))
      )
    ),
  topUp: (merchantId, customerId, input) =>
    run(
      Effect.all([id("customer_id", customerId), decode(CreditGrantRequests.CreateTopUp, input)]).pipe(
        Effect.flatMap(([c, i]) =>
          CreditGrants.CreditGrants.use((s) =>
            s.topUp(merchantId, {
              ...i,
              customer_id: c,
              ...(input.request_id !== undefined ? { key: input.request_id } : {})
            })
          )
        ),
        Effect.map(json(CreditGrant.CreditGrant))
      )
    )
})

/** `customers.autoTopUp`. @since 0.1.0 */
export const autoTopUp =
  ({ run }: Kit<Services>): BillingClient["customers"]["autoTopUp"] =>
  (merchantId, customerId, input) =>
    run(
      Effect.all([id("customer_id", customerId), decode(CreditGrantRequests.SetAutoTopUp, input)]).pipe(
        Effect.flatMap(([c, i]) =>
          CreditGrants.CreditGrants.use((s) => s.setAutoTopUp(merchantId, { ...i, customer_id: c }))
        ),
        Effect.map(json(CreditGrant.AutoTopUp))
      )
    )
