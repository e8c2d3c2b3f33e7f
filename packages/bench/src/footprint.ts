// Benchmark 7: `pnpm start` to the first answered request, on an empty PGlite data directory
// (migrations, demo merchant) and on an existing one; resident memory once idle. Baseline: the
// node:http + pg server's start and memory.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { record } from "./report.js"
import { postgresAnswers, pnpmStart, rssMiB, rssTreeMiB, startBaseline } from "./servers.js"

const idleRss = async (pid: number, tree = false) => {
  await new Promise((r) => setTimeout(r, 2000))
  return tree ? rssTreeMiB(pid) : rssMiB(pid)
}

export const run = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "recur-footprint-"))
  try {
    const cold = await pnpmStart(dataDir)
    const coldRss = await idleRss(cold.running.process.pid!, true)
    await cold.running.stop()
    const warm = await pnpmStart(dataDir)
    const warmRss = await idleRss(warm.running.process.pid!, true)
    await warm.running.stop()
    const baseline = (await postgresAnswers()) ? await startBaseline("public") : undefined
    const baseRss = baseline ? await idleRss(baseline.running.process.pid!) : NaN
    await baseline?.running.stop()
    const baseMs = baseline?.startMs ?? NaN
    record({
      bench: "7. footprint: pnpm start → first answer, empty PGlite data dir",
      recur: cold.startMs,
      baseline: baseMs,
      unit: "ms",
      note: "(migrations + demo merchant; baseline: node:http + pg process start)"
    })
    record({
      bench: "7. footprint: pnpm start → first answer, existing PGlite data dir",
      recur: warm.startMs,
      baseline: baseMs,
      unit: "ms"
    })
    record({
      bench: "7. footprint: idle RSS after start (PGlite in process)",
      recur: Math.max(coldRss, warmRss),
      baseline: baseRss,
      unit: "MiB",
      note: "(the whole `pnpm start` process tree: pnpm and the node server, with PGlite's WASM Postgres inside it)"
    })
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}
