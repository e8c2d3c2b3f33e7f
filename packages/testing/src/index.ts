/**
 * @recur/testing — in-memory storage, fixtures and the port contract suites.
 *
 * @since 0.1.0
 */
export * as EngineScenarios from "./EngineScenarios.js"
export * as Fixtures from "./Fixtures.js"
export * as MemoryStorage from "./MemoryStorage.js"
export * as PaymentGatewayContract from "./PaymentGatewayContract.js"
export * as ServicesContract from "./ServicesContract.js"
export * as StorageContract from "./StorageContract.js"
export * as SubscriptionScenarios from "./SubscriptionScenarios.js"
export * as WebhookRecorder from "./WebhookRecorder.js"
