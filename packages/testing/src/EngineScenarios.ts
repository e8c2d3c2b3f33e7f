/**
 * Merchant stories run through the billing engine on a frozen sandbox clock, checking every
 * invoice amount, status and event. Run against any storage adapter.
 *
 * @since 0.1.0
 */
import { layer } from "@effect/vitest"
import type { Store } from "@recur/core"
import type { Layer } from "effect"
import { checkoutStories } from "./engine/CheckoutStories.js"
import { collectionStories } from "./engine/CollectionStories.js"
import { cycleStories } from "./engine/CycleStories.js"
import { engine } from "./ScenarioKit.js"

/**
 * Registers the scenario suite: the stories of cycles (`engine/CycleStories.ts`), of collecting
 * (`engine/CollectionStories.ts`) and of checkouts (`engine/CheckoutStories.ts`), in that order.
 * The engine, `setup`, `subscribe`, `invoicesOf` and `eventsOf` are the kit's (`ScenarioKit`).
 *
 * @since 0.1.0
 */
export const suite = <E>(name: string, storage: Layer.Layer<Store.Storage, E>) =>
  layer(engine(storage), { timeout: "120 seconds" })(`Engine scenarios: ${name}`, (it) => {
    cycleStories(it)
    collectionStories(it)
    checkoutStories(it)
  })
