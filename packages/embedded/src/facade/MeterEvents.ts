/**
 * The facade's meter events group: the same service and the same request decoding as the REST
 * handlers, plus `stream`, which feeds any number of events through batches of up to 1,000.
 *
 * @since 0.1.0
 */
import { MeterEventRequests } from "@recur/contract"
import { Errors, MeterEvents } from "@recur/core"
import { Effect } from "effect"
import type { Services } from "../createBilling.js"
import type { BillingClient } from "./Client.js"
import { decode, type Kit } from "./Kit.js"
import type * as T from "./Types.js"

/** Ingests one batch; a refused event is named by its position in the whole stream (`offset` + index). */
const batchOf = (merchantId: string, events: ReadonlyArray<T.MeterEventInput>, offset = 0) =>
  decode(MeterEventRequests.MeterEventBatch, { events }).pipe(
    Effect.flatMap(MeterEventRequests.meterEventInputs),
    Effect.flatMap((inputs) => MeterEvents.MeterEvents.use((s) => s.sendBatch(merchantId, inputs))),
    Effect.map((done) => ({ accepted: done.accepted.length, duplicates: done.duplicates })),
    Effect.catchTag("MeterEventRefused", (e) =>
      Effect.fail(
        offset === 0 || e.index === undefined ? e : new Errors.MeterEventRefused({ ...e, index: e.index + offset })
      )
    )
  )

/** `meterEvents`. @since 0.1.0 */
export const meterEvents = ({ run }: Kit<Services>): BillingClient["meterEvents"] => ({
  send: (merchantId, input) =>
    run(
      decode(MeterEventRequests.MeterEvent, input).pipe(
        Effect.flatMap((i) => MeterEventRequests.meterEventInput(i)),
        Effect.flatMap((i) => MeterEvents.MeterEvents.use((s) => s.send(merchantId, i))),
        Effect.map((sent) => ({ event: MeterEvents.viewOf(sent.event), duplicate: sent.duplicate }))
      )
    ),
  sendBatch: (merchantId, events) => run(batchOf(merchantId, events)),
  stream: async (merchantId, events) => {
    let accepted = 0
    const duplicates: Array<string> = []
    let batch: Array<T.MeterEventInput> = []
    let offset = 0
    const flush = async () => {
      const done = await run(batchOf(merchantId, batch, offset))
      accepted += done.accepted
      for (const d of done.duplicates) duplicates.push(d)
      offset += batch.length
      batch = []
    }
    for await (const e of events) {
      batch.push(e)
      if (batch.length === MeterEvents.MAX_BATCH) await flush()
    }
    if (batch.length > 0) await flush()
    return { accepted, duplicates }
  },
  list: (merchantId, filter = {}) =>
    run(
      Effect.gen(function* () {
        const limit = filter.limit ?? 10
        const page = yield* MeterEvents.MeterEvents.use((s) =>
          s.list(merchantId, {
            customer_id: filter.customer_id,
            code: filter.code,
            limit,
            starting_after: filter.starting_after
          })
        )
        return { has_more: page.has_more, list: page.list.map(MeterEvents.viewOf) }
      })
    )
})
