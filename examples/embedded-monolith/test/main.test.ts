import { describe, expect, it } from "@effect/vitest"
import { layer } from "@recur/embedded"
import { Effect } from "effect"
import { program } from "../src/effect.js"
import { main } from "../src/main.js"

describe("embedded monolith", () => {
  it("the Promise app subscribes a customer and bills each month-end from Jan 31", async () => {
    const logged: Array<string> = []
    const lines = await main((l) => logged.push(l))
    expect(logged[0]).toMatch(/^checkout: succeeded, trade trd_\w+ 147.00 USD$/)
    expect(lines.map((l) => l.replace(/\s+/g, " "))).toEqual([
      "initial cycle 0 147.00 USD success 2026-01-31",
      "renewal cycle 1 147.00 USD success 2026-02-28",
      "renewal cycle 2 147.00 USD success 2026-03-31",
      "renewal cycle 3 147.00 USD success 2026-04-30"
    ])
  })

  it.effect("the Effect version gives the same invoices", () =>
    Effect.gen(function* () {
      expect(yield* program).toEqual(["initial 0 147.00", "renewal 1 147.00", "renewal 2 147.00", "renewal 3 147.00"])
    }).pipe(Effect.provide(layer({ storage: "memory" })))
  )
})
