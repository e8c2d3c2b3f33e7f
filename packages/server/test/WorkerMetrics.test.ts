/**
 * `recur worker` with `RECUR_WORKER_METRICS_PORT`: its own `GET /metrics` (behind
 * `RECUR_METRICS_TOKEN`, as the server's) shows the database pool (and no API request metrics), `/healthz`
 * answers, SIGTERM ends it cleanly; a port that is no port is refused in one line.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const script = fileURLToPath(new URL("../bin/recur.mjs", import.meta.url))
const env = (extra: Record<string, string>) => {
  const { RECUR_MASTER_KEY: _k, DATABASE_URL: _d, ...rest } = process.env
  return { ...rest, RECUR_LOG_LEVEL: "warn", ...extra }
}

describe("recur worker metrics", { timeout: 300_000 }, () => {
  it("GET /metrics on RECUR_WORKER_METRICS_PORT: token required, the pool gauges, no API request metrics; SIGTERM exits 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-worker-metrics-"))
    const token = `worker-${randomBytes(12).toString("hex")}`
    const child = spawn(process.execPath, ["--conditions=source", script, "worker"], {
      cwd: root,
      env: env({ RECUR_DATA_DIR: dir, RECUR_WORKER_METRICS_PORT: "0", RECUR_METRICS_TOKEN: token })
    })
    let out = ""
    child.stdout.on("data", (d) => (out += String(d)))
    child.stderr.on("data", (d) => (out += String(d)))
    try {
      const port = await new Promise<string>((resolve, reject) => {
        const check = (d: unknown) => {
          const m = /Recur worker metrics on port (\d+): GET \/metrics/.exec(String(d))
          if (m) resolve(m[1]!)
        }
        child.stdout.on("data", check)
        child.once("exit", (code) => reject(new Error(`worker exited ${code}: ${out}`)))
      })
      const base = `http://127.0.0.1:${port}`
      expect((await fetch(`${base}/metrics`)).status).toBe(401)
      expect((await fetch(`${base}/healthz`)).status).toBe(200)
      const scraped = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      expect(scraped.status).toBe(200)
      const text = await scraped.text()
      expect(text).toContain("# TYPE recur_db_pool_connections gauge")
      expect(text).toMatch(/^recur_db_pool_max\{storage="pglite"\} 1$/m)
      expect(text).toMatch(/^recur_db_pool_connections\{storage="pglite",state="(active|idle)"\} 1$/m)
      expect(text).toMatch(/^recur_db_pool_waiting\{storage="pglite"\} \d+$/m)
      // the API's request metrics are the server's, not the worker's
      expect(text).not.toContain("recur_http_requests_total{")
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      child.kill("SIGTERM")
      expect(await exited, out).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a RECUR_WORKER_METRICS_PORT that is no port: one line, exit 1", () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-worker-metrics-"))
    try {
      const out = spawnSync(process.execPath, ["--conditions=source", script, "worker"], {
        cwd: root,
        env: env({ RECUR_DATA_DIR: dir, RECUR_WORKER_METRICS_PORT: "70000" }),
        encoding: "utf8",
        timeout: 240_000
      })
      expect(out.status).toBe(1)
      expect(out.stderr.trim().split("\n")).toEqual([
        "recur: RECUR_WORKER_METRICS_PORT must be a port number from 0 to 65535 (0: any free port)"
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
