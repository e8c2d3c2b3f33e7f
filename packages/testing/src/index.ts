/**
 * @recur/testing — fixtures, scenario suites and the port contract suites. `MemoryStorage` is
 * re-exported from `@recur/memory` for the suites that run on it.
 *
 * @since 0.1.0
 */
export * as DiscountScenarios from "./DiscountScenarios.js"
export * as DunningScenarios from "./DunningScenarios.js"
export * as EngineScenarios from "./EngineScenarios.js"
export * as Fixtures from "./Fixtures.js"
export * as InvoiceDocumentScenarios from "./InvoiceDocumentScenarios.js"
export * as MigrationScenarios from "./MigrationScenarios.js"
export * as MetricScenarios from "./MetricScenarios.js"
export * as ModelScenarios from "./ModelScenarios.js"
export * as NotificationScenarios from "./NotificationScenarios.js"
export * as MountJourney from "./MountJourney.js"
export * as PaymentGatewayContract from "./PaymentGatewayContract.js"
export * as PortalScenarios from "./PortalScenarios.js"
export * as ScenarioKit from "./ScenarioKit.js"
export * as ServicesContract from "./ServicesContract.js"
export * as StorageContract from "./StorageContract.js"
export * as SubscriptionScenarios from "./SubscriptionScenarios.js"
export * as TaxScenarios from "./TaxScenarios.js"
export * as OneOffScenarios from "./OneOffScenarios.js"
export * as EntitlementScenarios from "./EntitlementScenarios.js"
export * as WebhookRecorder from "./WebhookRecorder.js"
export { MemoryStorage } from "@recur/memory"
