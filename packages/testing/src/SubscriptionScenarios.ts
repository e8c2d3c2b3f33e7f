/**
 * Merchant stories of changes, lifecycle, usage and refunds on a frozen sandbox clock.
 *
 * @since 0.1.0
 */
import { layer } from "@effect/vitest"
import type { Store } from "@recur/core"
import type { Layer } from "effect"
import { engine } from "./ScenarioKit.js"
import { lifecycleStories } from "./subscription/LifecycleStories.js"
import { priceChangeStories } from "./subscription/PriceChangeStories.js"

/**
 * Registers the suite: the stories of price changes (`subscription/PriceChangeStories.ts`), then
 * of the lifecycle, usage and refunds (`subscription/LifecycleStories.ts`).
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "120 seconds" })(`Subscription scenarios: ${name}`, (it) => {
    priceChangeStories(it)
    lifecycleStories(it)
  })
