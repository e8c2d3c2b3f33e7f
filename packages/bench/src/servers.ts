// Child processes for the HTTP benchmarks: Recur's standalone server and the hand-written
// baseline, each in its own process on the same PostgreSQL schema, and autocannon to load them.
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import pg from "pg"

export const root = fileURLToPath(new URL("../../..", import.meta.url))
const serverMain = fileURLToPath(new URL("../../server/src/main.ts", import.meta.url))
const baselineMain = fileURLToPath(new URL("./baseline-server.mjs", import.meta.url))

/** PostgreSQL for the benchmarks: `RECUR_BENCH_DATABASE_URL`, `RECUR_TEST_DATABASE_URL`, or local. */
export const databaseUrl =
  process.env.RECUR_BENCH_DATABASE_URL ??
  process.env.RECUR_TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test"

export const postgresAnswers = async () => {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query("select 1")
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

export const dropSchema = async (schema: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  await client.query(`drop schema if exists "${schema}" cascade`)
  await client.end()
}

export const masterKey = randomBytes(32).toString("hex")
let nextPort = 41000 + Math.floor(Math.random() * 10000)

export interface Running {
  readonly name: string
  readonly url: string
  readonly process: ChildProcess
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const waitFor = async (url: string, child: ChildProcess, output: () => string, timeoutMs = 90_000) => {
  const started = Date.now()
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${output()}`)
    try {
      const r = await fetch(`${url}/healthz`)
      if (r.status === 200) return Date.now() - started
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`server did not answer within ${timeoutMs} ms: ${output()}`)
}

const launch = async (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  command: string = process.execPath
) => {
  const port = nextPort++
  // its own process group, so stopping `pnpm start` stops the node server under it too
  const child = spawn(command, [...args], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let out = ""
  child.stdout!.on("data", (d) => (out = (out + String(d)).slice(-20_000)))
  child.stderr!.on("data", (d) => (out = (out + String(d)).slice(-20_000)))
  const url = `http://127.0.0.1:${port}`
  const startMs = await waitFor(url, child, () => out)
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      const signal = (sig: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, sig)
        } catch {
          // already gone
        }
      }
      child.on("exit", () => setTimeout(resolve, 300))
      signal("SIGTERM")
      setTimeout(() => signal("SIGKILL"), 10_000).unref()
    })
  return { running: { name, url, process: child, output: () => out, stop } satisfies Running, startMs }
}

/**
 * Recur's standalone server (`recur serve`) on a PostgreSQL schema: no rate limit, no access log.
 * `BENCH_SERVER_NODE_ARGS` adds Node flags (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
export const startRecur = (schema: string, extra: Record<string, string> = {}) =>
  launch(
    "Recur",
    [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      "--conditions=source",
      "--import",
      "tsx",
      serverMain,
      "serve"
    ],
    {
      DATABASE_URL: databaseUrl,
      RECUR_DATABASE_SCHEMA: schema,
      RECUR_MASTER_KEY: masterKey,
      RECUR_RATE_LIMIT: "off",
      RECUR_ACCESS_LOG: "false",
      ...extra
    }
  )

/** `pnpm start` (the README's command) on embedded PGlite in `dataDir` (footprint). */
export const pnpmStart = (dataDir: string) => launch("pnpm start", ["start"], { RECUR_DATA_DIR: dataDir }, "pnpm")

/** The node:http + pg baseline on the same schema. */
export const startBaseline = (schema: string) =>
  launch("baseline", [baselineMain], { DATABASE_URL: databaseUrl, RECUR_DATABASE_SCHEMA: schema })

/** Any script as a server (TypeScript through tsx). */
export const launchScript = (name: string, file: string, typescript: boolean) =>
  launch(name, typescript ? ["--conditions=source", "--import", "tsx", file] : [file], { DATABASE_URL: databaseUrl })

/** Resident set size of a process, in MiB (Linux). */
export const rssMiB = (pid: number): number => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    return kb / 1024
  } catch {
    return NaN
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); 0 elsewhere. */
export const cpuSeconds = (pid: number | undefined) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

/** Bytes a process has passed to write(2) and read(2) so far (sockets included), from /proc (Linux); 0 elsewhere. */
export const ioBytes = (pid: number | undefined) => {
  try {
    const io = Object.fromEntries(
      readFileSync(`/proc/${pid}/io`, "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split(": ") as [string, string])
    )
    return { written: Number(io.wchar ?? 0), read: Number(io.rchar ?? 0) }
  } catch {
    return { written: 0, read: 0 }
  }
}

/** RSS of a process and all its descendants, in MiB (Linux): `pnpm start` runs node under pnpm. */
export const rssTreeMiB = (pid: number): number => {
  const children = new Map<number, Array<number>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {
      // the process ended meanwhile
    }
  }
  const walk = (p: number): number => rssMiB(p) + (children.get(p) ?? []).reduce((sum, c) => sum + walk(c), 0)
  return walk(pid)
}

export interface Load {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  readonly total: number
  readonly peakRssMiB: number
}

/** Loads `path` on a server with autocannon; samples the server's RSS while it runs. */
export const load = async (
  server: Running,
  options: {
    readonly path: string
    readonly method?: "GET" | "POST"
    readonly headers?: Record<string, string>
    readonly body?: () => string
    readonly connections?: number
    readonly seconds: number
  }
): Promise<Load> => {
  let peak = rssMiB(server.process.pid!)
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(server.process.pid!))), 250)
  let n = 0
  const result = await autocannon({
    url: `${server.url}${options.path}`,
    method: options.method ?? "GET",
    connections: options.connections ?? 50,
    duration: options.seconds,
    headers: options.headers ?? {},
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          headers: { ...req.headers, "request-id": `bench-${process.pid}-${Date.now()}-${++n}` },
          ...(options.body ? { body: options.body() } : {})
        })
      }
    ]
  })
  clearInterval(sampler)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
    peakRssMiB: peak
  }
}
