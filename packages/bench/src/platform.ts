// Benchmark 6b: how much of the HTTP overhead is the @effect/platform server itself. A bare
// Effect router answering GET /healthz against node:http answering the same JSON.
import { fileURLToPath } from "node:url"
import { record } from "./report.js"
import { launchScript, load } from "./servers.js"

const seconds = Number(process.env.BENCH_HTTP_SECONDS ?? 20)

export const run = async () => {
  const floor = (
    await launchScript("effect floor", fileURLToPath(new URL("./platform-floor.ts", import.meta.url)), true)
  ).running
  const raw = (await launchScript("node:http", fileURLToPath(new URL("./baseline-server.mjs", import.meta.url)), false))
    .running
  try {
    await load(floor, { path: "/healthz", seconds: 3 })
    await load(raw, { path: "/healthz", seconds: 3 })
    const f = await load(floor, { path: "/healthz", seconds })
    const b = await load(raw, { path: "/healthz", seconds })
    record({
      bench: "6b. bare @effect/platform router: GET /healthz (no Recur code)",
      recur: f.rps,
      baseline: b.rps,
      unit: "req/s",
      p99: { recur: f.p99, baseline: b.p99 },
      note: "(the floor under benchmark 6)"
    })
  } finally {
    await floor.stop()
    await raw.stop()
  }
}
