/**
 * The prepaid-credits group: credit grants, top-up purchases and a customer's automatic top-up
 * (issue 35).
 *
 * @since 0.1.0
 */
import { CreditGrant } from "@recur/core"
import { CreditGrantRequests } from "@recur/contract"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as ApiErrors from "../Errors.js"
import { Authentication, Envelope, Page, PageQuery } from "./Shared.js"

const CustomerPath = Schema.Struct({ customer_id: Schema.String })
const GrantPath = Schema.Struct({ credit_grant_id: Schema.String })

/**
 * Prepaid credits: grants of credit on a customer's balance, applied by its invoices
 * earliest-expiring first, top-ups bought with a card, and automatic top-ups.
 *
 * @since 0.1.0
 */
export class CreditGrantsGroup extends HttpApiGroup.make("creditGrants")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/customers/:customer_id/credit_grants", {
      params: CustomerPath,
      payload: CreditGrantRequests.CreateCreditGrant,
      success: Envelope(CreditGrantRequests.CreditGrantAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v1/customers/:customer_id/credit_grants", {
      params: CustomerPath,
      query: Schema.Struct(PageQuery),
      success: Envelope(Page(CreditGrant.CreditGrant)),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/credit_grants/:credit_grant_id", {
      params: GrantPath,
      success: Envelope(CreditGrantRequests.CreditGrantAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("void", "/api/v1/credit_grants/:credit_grant_id/void", {
      params: GrantPath,
      success: Envelope(CreditGrantRequests.CreditGrantAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("topUp", "/api/v1/customers/:customer_id/credit_top_ups", {
      params: CustomerPath,
      payload: CreditGrantRequests.CreateTopUp,
      success: Envelope(CreditGrantRequests.CreditGrantAnswer),
      error: ApiErrors.all
    })
  )
  .add(
    HttpApiEndpoint.post("autoTopUp", "/api/v1/customers/:customer_id/auto_top_up", {
      params: CustomerPath,
      payload: CreditGrantRequests.SetAutoTopUp,
      success: Envelope(CreditGrantRequests.AutoTopUpAnswer),
      error: ApiErrors.all
    })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Prepaid credits") {}
