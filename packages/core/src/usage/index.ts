/**
 * `usage/` — Usage records and the metering service; billable metrics and their service.
 *
 * @since 0.1.0
 */
export * as Usage from "./Usage.js"
export * as Metering from "./Metering.js"
export * as Aggregation from "./Aggregation.js"
export * as BillableMetric from "./BillableMetric.js"
export * as BillableMetrics from "./BillableMetrics.js"
export * as MeterValues from "./MeterValues.js"
export * as MeterEvents from "./MeterEvents.js"
export * as MetricUsage from "./MetricUsage.js"
export * as UsageAdjustment from "./UsageAdjustment.js"
export * as LateEvents from "./LateEvents.js"
export * as UsageAdjustments from "./UsageAdjustments.js"
export * as MeterCorrections from "./MeterCorrections.js"
export * as UsageAlert from "./UsageAlert.js"
export * as UsageAlerts from "./UsageAlerts.js"
export * as UsageChecks from "./UsageChecks.js"
export * as ProgressiveBilling from "./ProgressiveBilling.js"
