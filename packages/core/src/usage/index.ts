/**
 * `usage/` — Usage records and the metering service.
 *
 * @since 0.1.0
 */
export * as Usage from "./Usage.js"
export * as Metering from "./Metering.js"
export * as Aggregation from "./Aggregation.js"
export * as MeterValues from "./MeterValues.js"
export * as MeterEvents from "./MeterEvents.js"
