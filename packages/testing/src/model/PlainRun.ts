/**
 * The runner of the plain merchants' operations in a model run: one handler per operation kind,
 * each in the file of its area under `model/ops/` (subscribing, the clock, price and quantity
 * changes, item changes, interval switches, schedules, the lifecycle, money back and usage, the
 * customer balance). A new operation
 * kind is a case of `Operations.Op`, its draw in `Operations.nextOp`, and its handler here.
 * Used by `ModelScenarios.suite`.
 *
 * @since 0.1.0
 */
import type { Op } from "./Operations.js"
import type { Handler, Handlers, PlainContext } from "./PlainContext.js"
import { adjust, creditNote, voidDraft } from "./ops/Balance.js"
import { changePrice, changeQuantity } from "./ops/Changes.js"
import { advance } from "./ops/Clock.js"
import { switchInterval } from "./ops/Intervals.js"
import { changeItems } from "./ops/Items.js"
import { cancel, pause, resume, revokeCancel } from "./ops/Lifecycle.js"
import { refund, usage } from "./ops/Money.js"
import { schedule } from "./ops/Schedules.js"
import { subscribe } from "./ops/Subscribe.js"

/** Every operation kind's handler. */
export const handlers: Handlers = {
  Subscribe: subscribe,
  Advance: advance,
  ChangePrice: changePrice,
  ChangeQuantity: changeQuantity,
  ChangeItems: changeItems,
  SwitchInterval: switchInterval,
  Schedule: schedule,
  Cancel: cancel,
  RevokeCancel: revokeCancel,
  Pause: pause,
  Resume: resume,
  Refund: refund,
  Usage: usage,
  CreditNote: creditNote,
  Adjust: adjust,
  VoidDraft: voidDraft
}

/** Runs operation `op` (number `n` of the run) on the engine and the model, and checks it. */
export const runPlain = (op: Op, ctx: PlainContext, n: number) => (handlers[op._tag] as Handler<Op["_tag"]>)(op, ctx, n)
