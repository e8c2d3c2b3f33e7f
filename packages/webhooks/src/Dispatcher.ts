/**
 * Running the webhook dispatcher: a fiber that drains the outbox (fan-out + first attempts).
 * Retries are work items of kind `webhook`, run by the billing worker on the merchant's clock.
 *
 * @since 0.1.0
 */
import { WebhookDispatch } from "@recur/core"
import { Effect, Layer } from "effect"

/**
 * The dispatcher loop, forever (interrupt it to stop; leases make a restart safe).
 *
 * @since 0.1.0
 */
export const run = (options: { readonly owner: string; readonly intervalMs?: number; readonly limit?: number }) =>
  WebhookDispatch.WebhookDispatch.use((w) => w.dispatcher(options))

/**
 * The dispatcher as a Layer: forked for the Layer's lifetime.
 *
 * @since 0.1.0
 */
export const layer = (options: { readonly owner: string; readonly intervalMs?: number; readonly limit?: number }) =>
  Layer.effectDiscard(Effect.forkScoped(run(options)))
