import { it } from "@effect/vitest"
import fc from "fast-check"

/** Every property test replays: one fixed seed, a bounded number of runs. */
export const SEED = 20_261_123

/**
 * A synchronous property test over fast-check arbitraries: fixed seed, bounded runs, and a
 * timeout sized for a loaded two-core machine (never vitest's 5 s default).
 */
export const prop = <const Ts extends Array<unknown>>(
  name: string,
  arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  body: (values: Ts) => void,
  parameters: fc.Parameters<Ts> = {}
) =>
  it(name, () => {
    const property = (fc.property as unknown as (...args: Array<unknown>) => fc.IProperty<Ts>)(
      ...(arbitraries as ReadonlyArray<fc.Arbitrary<unknown>>),
      (...values: Array<unknown>) => {
        body(values as unknown as Ts)
      }
    )
    fc.assert(property, { seed: SEED, numRuns: 100, ...parameters })
  }, 60_000)
