/**
 * The merchant REST API as one `HttpApi`: every path and method of the seed and the
 * contract's additions, importable without the handlers (for `HttpApiClient` and OpenAPI).
 *
 * @since 0.1.0
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { CatalogGroup, PricePayload } from "./api/Catalog.js"
import { CheckoutGroup, SessionPayload } from "./api/Checkout.js"
import { CustomersGroup } from "./api/Customers.js"
import { CustomerBalancesGroup } from "./api/CustomerBalances.js"
import { DiscountsGroup } from "./api/Discounts.js"
import { SchedulesGroup } from "./api/Schedules.js"
import { ItemsGroup } from "./api/Items.js"
import { PaymentsGroup } from "./api/Payments.js"
import { PortalGroup } from "./api/Portal.js"
import { NotificationsGroup } from "./api/Notifications.js"
import { SandboxGroup } from "./api/Sandbox.js"
import { DecodeErrors } from "./api/Shared.js"
import { SubscriptionsGroup } from "./api/Subscriptions.js"
import { TaxRatesGroup } from "./api/TaxRates.js"
import { BillableMetricsGroup } from "./api/BillableMetrics.js"
import { CreditGrantsGroup } from "./api/CreditGrants.js"
import { UsageAlertsGroup } from "./api/UsageAlerts.js"
import { InvoiceItemsGroup } from "./api/InvoiceItems.js"
import { MeterEventsGroup } from "./api/MeterEvents.js"
import { UsageAdjustmentsGroup } from "./api/UsageAdjustments.js"
import { EntitlementsGroup } from "./api/Entitlements.js"
import { WebhooksGroup } from "./api/Webhooks.js"
import * as OpenApiDocument from "./internal/openapi.js"
import * as OpenApiForGenerators from "./internal/openapiForGenerators.js"

export { Authentication, CurrentMerchant, DecodeErrors, Envelope, Page } from "./api/Shared.js"
export {
  CatalogGroup,
  CheckoutGroup,
  CustomersGroup,
  CustomerBalancesGroup,
  DiscountsGroup,
  SchedulesGroup,
  ItemsGroup,
  PaymentsGroup,
  PortalGroup,
  PricePayload,
  SandboxGroup,
  SessionPayload,
  SubscriptionsGroup,
  TaxRatesGroup,
  BillableMetricsGroup,
  CreditGrantsGroup,
  UsageAlertsGroup,
  InvoiceItemsGroup,
  MeterEventsGroup,
  UsageAdjustmentsGroup,
  EntitlementsGroup,
  NotificationsGroup,
  WebhooksGroup
}

/**
 * Declares what the middleware requires of every operation but no endpoint schema carries: the
 * `Request-Id` header (1..255 printable characters; the idempotency key of a POST), so Swagger's
 * "Try it out" and generated clients send it.
 */
const requestIdHeader = (spec: Record<string, any>): Record<string, any> => {
  const ref = { $ref: "#/components/parameters/RequestId" }
  const paths = Object.fromEntries(
    Object.entries(spec.paths ?? {}).map(([path, ops]) => [
      path,
      Object.fromEntries(
        Object.entries(ops as Record<string, any>).map(([method, op]) => [
          method,
          typeof op === "object" && op !== null && Array.isArray(op.security)
            ? { ...op, parameters: [...(op.parameters ?? []), ref] }
            : op
        ])
      )
    ])
  )
  return {
    ...spec,
    paths,
    components: {
      ...spec.components,
      parameters: {
        ...spec.components?.parameters,
        RequestId: {
          name: "Request-Id",
          in: "header",
          required: true,
          description:
            "1 to 255 printable characters, unique per request. A POST with a Request-Id already seen replays the stored answer (7 days); with another body it is 409 idempotency_conflict.",
          schema: { type: "string", minLength: 1, maxLength: 255 }
        }
      }
    }
  }
}

/**
 * What the OpenAPI document says beyond the endpoints' schemas: the `Request-Id` header, the
 * descriptions and request rules ({@link OpenApiDocument.describe}), then the shape client
 * generators need ({@link OpenApiForGenerators.forGenerators}).
 */
const document = (spec: Record<string, any>): Record<string, any> =>
  OpenApiForGenerators.forGenerators(OpenApiDocument.describe(requestIdHeader(spec)))

/**
 * The whole API.
 *
 * @since 0.1.0
 */
export class BillingApi extends HttpApi.make("recur")
  .add(CustomersGroup)
  .add(CatalogGroup)
  .add(CheckoutGroup)
  .add(SubscriptionsGroup)
  .add(PaymentsGroup)
  .add(SandboxGroup)
  .add(WebhooksGroup)
  .add(DiscountsGroup)
  .add(SchedulesGroup)
  .add(ItemsGroup)
  .add(TaxRatesGroup)
  .add(BillableMetricsGroup)
  .add(CreditGrantsGroup)
  .add(InvoiceItemsGroup)
  .add(MeterEventsGroup)
  .add(UsageAdjustmentsGroup)
  .add(UsageAlertsGroup)
  .add(PortalGroup)
  .add(EntitlementsGroup)
  .add(NotificationsGroup)
  .add(CustomerBalancesGroup)
  .middleware(DecodeErrors)
  .annotate(OpenApi.Title, "Recur merchant API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Transform, document) {}

/**
 * The API as the Swagger UI page (`/docs`) embeds it: its server is relative to the page (`.`),
 * so "Try it out" calls the API the page is served by, under a mount prefix too.
 *
 * @since 0.1.0
 */
export const SwaggerApi = BillingApi.annotate(OpenApi.Transform, (spec) => ({
  ...document(spec),
  servers: [{ url: ".", description: "The API this page is served by" }]
}))
