/**
 * `schedules/` — Subscription schedules: the entity and its machine, the phase rules the renewals apply, and the service that attaches, releases and cancels them.
 *
 * @since 0.1.0
 */
export * as PhaseItems from "./PhaseItems.js"
export * as Schedule from "./Schedule.js"
export * as Schedules from "./Schedules.js"
