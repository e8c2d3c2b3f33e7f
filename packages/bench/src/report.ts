import { execSync } from "node:child_process"
import { appendFileSync, mkdirSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { fileURLToPath } from "node:url"

/** One benchmark figure: Recur against its baseline in the same run. */
export interface Figure {
  readonly bench: string
  readonly recur: number
  readonly baseline: number
  readonly unit: string
  readonly goal?: string
  readonly p99?: { readonly recur: number; readonly baseline: number }
  readonly note?: string
}

export const machine = () => {
  const pg = (() => {
    try {
      return execSync("psql --version", { encoding: "utf8" }).trim()
    } catch {
      return "psql not found"
    }
  })()
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${pg}`
}

const results = fileURLToPath(new URL("../results/", import.meta.url))

/** Prints a figure as a markdown row and appends it (as JSON) to results/<date>.jsonl. */
export const record = (f: Figure) => {
  const ratio = f.baseline > 0 ? (f.recur / f.baseline) * 100 : NaN
  const p99 = f.p99
    ? ` | p99 ${f.p99.recur.toFixed(1)} ms vs ${f.p99.baseline.toFixed(1)} ms (${(f.p99.recur / Math.max(f.p99.baseline, 0.001)).toFixed(2)}×)`
    : " | –"
  console.log(
    `| ${f.bench} | ${fmt(f.recur)} ${f.unit} | ${fmt(f.baseline)} ${f.unit} | ${ratio.toFixed(0)} %${p99} | ${f.goal ?? ""} |${f.note ? ` ${f.note}` : ""}`
  )
  mkdirSync(results, { recursive: true })
  appendFileSync(
    `${results}${new Date().toISOString().slice(0, 10)}.jsonl`,
    `${JSON.stringify({ ...f, ratio, at: new Date().toISOString(), machine: machine() })}\n`
  )
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2))
