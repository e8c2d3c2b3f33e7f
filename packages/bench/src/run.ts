// pnpm bench [core] [http] [platform] [billing] [usage] [meter] [footprint] — every benchmark runs Recur and its
// baseline side by side in one run and prints markdown rows for docs/benchmarks.md.
import { machine } from "./report.js"

const all = ["core", "http", "platform", "billing", "usage", "footprint"] as const
// `usage` ends with the meter events (4b); `meter` runs them alone
const wanted = process.argv.slice(2).filter((a) => [...all, "meter"].includes(a))
const names = wanted.length > 0 ? wanted : [...all]
console.log(`Recur benchmarks — ${new Date().toISOString()} — ${machine()}`)
console.log("| benchmark | Recur | baseline | ratio | tail latency | goal |")
console.log("|---|---|---|---|---|---|")
for (const name of names) {
  const mod = await import(`./${name}.js`)
  await mod.run()
}
process.exit(0)
