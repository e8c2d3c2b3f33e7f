/**
 * Subscription schedules on the wire: the body of `POST /api/v1/subscription/{id}/schedule`
 * and its decoding into the engine's `Schedules.ScheduleCommand`, shared by the REST adapter and
 * the Promise facade so both refuse a bad schedule with the same words.
 *
 * @since 0.1.0
 */
import { Errors, Ids, PriceRules, Schedule, type Schedules } from "@recur/core"
import { Effect, Option, Result, Schema } from "effect"

/**
 * One item of a phase: a recurring price and its quantity (default 1). A phase holds 1 to 20
 * items, the first one the subscription's base item.
 *
 * @since 0.1.0
 */
export const ScheduleItem = Schema.Struct({
  price_id: Schema.optional(Schema.String),
  /** A whole number from 1, as a number or a decimal string (`8` or `"8"`), as the items endpoint takes it. */
  quantity: Schema.optional(Schema.Union([Schema.String, Schema.Number]))
})

/**
 * One phase: its items (1 to 20, on the subscription's interval and currency), an optional discount code for its cycles, and its duration — `cycles`
 * (whole billing cycles) or `end_date` (one of the subscription's period boundaries), one of them.
 *
 * @since 0.1.0
 */
export const SchedulePhase = Schema.Struct({
  items: Schema.optional(Schema.Array(ScheduleItem)),
  discount_code: Schema.optional(Schema.String),
  cycles: Schema.optional(Schema.Int),
  end_date: Schema.optional(Schema.String)
})

/**
 * The body of `POST /api/v1/subscription/{id}/schedule`: 1–10 phases, `start`
 * (`current_period`, default, or `next_period`) and `end_behavior` (`release`, default, or `cancel`).
 *
 * @since 0.1.0
 */
export const CreateSchedule = Schema.Struct({
  start: Schema.optional(
    Schema.Literals(["current_period", "next_period"]).annotate({
      description:
        "`current_period` (default): the first phase is what the subscription bills now; `next_period`: it starts at the period's end"
    })
  ),
  end_behavior: Schema.optional(
    Schema.Literals(["release", "cancel"]).annotate({
      description:
        "`release` (default): the subscription goes on as the last phase left it; `cancel`: it ends with the last phase"
    })
  ),
  phases: Schema.optional(Schema.Array(SchedulePhase))
})

const invalid = (param: string, reason: string) => new Errors.InvalidParameter({ param, reason })

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/**
 * Decodes a schedule body for subscription `subscriptionId` into the engine's command: each
 * field checked and named (`phases[1].items[2].quantity`), 1 to 20 items per phase, exactly one
 * of `cycles` and `end_date`. Whether the items go together is the engine's check (named the same way).
 *
 * @since 0.1.0
 */
export const scheduleCommand = (
  subscriptionId: string,
  body: typeof CreateSchedule.Type
): Effect.Effect<Schedules.ScheduleCommand, Errors.InvalidParameter | Errors.NotFound> =>
  Effect.gen(function* () {
    if (Option.isNone(Ids.SubscriptionId.makeOption(subscriptionId)))
      return yield* new Errors.NotFound({ resource: "subscription", id: subscriptionId })
    // both enums, checked by the schema (a wrong value is a 400 naming `start` / `end_behavior`)
    const start = body.start ?? "current_period"
    const endBehavior = body.end_behavior ?? "release"
    const phases = body.phases ?? []
    if (phases.length < 1 || phases.length > Schedule.MAX_PHASES)
      return yield* invalid("phases", `must hold 1 to ${Schedule.MAX_PHASES} phases`)
    const out: Array<Schedules.PhaseCommand> = []
    for (const [i, p] of phases.entries()) {
      const at = `phases[${i}]`
      const items = p.items ?? []
      if (items.length < 1 || items.length > Schedule.MAX_ITEMS)
        return yield* invalid(`${at}.items`, `must hold 1 to ${Schedule.MAX_ITEMS} items`)
      const decoded: Array<Schedules.PhaseCommand["items"][number]> = []
      for (const [j, item] of items.entries()) {
        const field = `${at}.items[${j}]`
        if (item.price_id === undefined || item.price_id === "")
          return yield* invalid(`${field}.price_id`, "is required")
        if (Option.isNone(Ids.PriceId.makeOption(item.price_id)))
          return yield* new Errors.NotFound({ resource: "price", id: item.price_id, param: `${field}.price_id` })
        let quantity = Option.none<bigint>()
        if (item.quantity !== undefined) {
          const q = PriceRules.validateQuantity(`${field}.quantity`, String(item.quantity))
          if (Result.isFailure(q)) return yield* invalid(`${field}.quantity`, q.failure.message)
          quantity = Option.some(q.success)
        }
        decoded.push({ priceId: item.price_id, quantity })
      }
      if ((p.cycles === undefined) === (p.end_date === undefined))
        return yield* invalid(`${at}.cycles`, "give exactly one of cycles and end_date")
      let duration: Schedules.PhaseCommand["duration"]
      if (p.cycles !== undefined) {
        if (!Number.isInteger(p.cycles) || p.cycles < 1 || p.cycles > Schedule.MAX_PHASE_CYCLES)
          return yield* invalid(`${at}.cycles`, `must be a whole number from 1 to ${Schedule.MAX_PHASE_CYCLES}`)
        duration = { cycles: p.cycles }
      } else {
        const ms = RFC3339.test(p.end_date!) ? Date.parse(p.end_date!) : Number.NaN
        if (Number.isNaN(ms)) return yield* invalid(`${at}.end_date`, "must be an RFC 3339 timestamp")
        duration = { endDate: ms }
      }
      if (p.discount_code !== undefined && (p.discount_code === "" || p.discount_code.length > 64))
        return yield* invalid(`${at}.discount_code`, "must be 1 to 64 characters")
      out.push({
        items: decoded,
        discountCode: Option.fromUndefinedOr(p.discount_code),
        duration
      })
    }
    return { subscriptionId, start, endBehavior, phases: out }
  })
