/**
 * The standalone server as an operator runs it: `recur serve` in a process of its own with the
 * environment given (and none of the test runner's own Recur or database settings), read from
 * its output, stopped by a signal. Shared by the deployment, backup and proxy tests.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/** The repository's root. */
export const root = fileURLToPath(new URL("../../../..", import.meta.url))
/** The CLI's entry, from its sources. */
export const main = fileURLToPath(new URL("../../src/main.ts", import.meta.url))

/** The environment of the test runner without the settings that would change what Recur uses. */
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("RECUR_") && k !== "DATABASE_URL" && k !== "PORT")
  ) as Record<string, string>

/** A running server. */
export interface Running {
  readonly child: ChildProcess
  /** The port it listens on (`PORT=0`: the one the system picked). */
  readonly port: number
  /** `http://127.0.0.1:<port>`. */
  readonly local: string
  /** The demo merchant's id and key when this start created them (a fresh store). */
  readonly demo: { readonly merchant_id: string; readonly api_key: string } | undefined
  /** Everything printed so far, stdout and stderr. */
  readonly output: () => string
  /** Sends `signal` and answers the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/**
 * Starts `command` (the CLI by default: `node --conditions=source --import tsx src/main.ts serve`)
 * and waits until it listens and has either printed the demo key or found existing data.
 */
export const start = async (options: {
  readonly env: Record<string, string>
  readonly command?: ReadonlyArray<string>
  readonly timeoutMs?: number
}): Promise<Running> => {
  const [file, ...args] = options.command ?? [process.execPath, "--conditions=source", "--import", "tsx", main, "serve"]
  const child = spawn(file!, args, { cwd: root, env: { ...cleanEnv(), ...options.env } })
  let out = ""
  child.stdout!.on("data", (d) => (out += String(d)))
  child.stderr!.on("data", (d) => (out += String(d)))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(check)
      reject(new Error(`the server did not start: ${out}`))
    }, options.timeoutMs ?? 170_000)
    const check = setInterval(() => {
      if (/Recur listening on port \d+/.test(out) && /Demo API key: \S+|existing data found/.test(out)) {
        clearTimeout(timer)
        clearInterval(check)
        resolve()
      }
    }, 100)
    void exited.then((code) => {
      clearTimeout(timer)
      clearInterval(check)
      reject(new Error(`the server exited (${code}) before it listened: ${out}`))
    })
  })
  const port = Number(/Recur listening on port (\d+)/.exec(out)![1])
  const merchant = /Demo merchant: (mch_\w+)/.exec(out)?.[1]
  const key = /Demo API key: (sk_test_\w+)/.exec(out)?.[1]
  return {
    child,
    port,
    local: `http://127.0.0.1:${port}`,
    demo: merchant !== undefined && key !== undefined ? { merchant_id: merchant, api_key: key } : undefined,
    output: () => out,
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

/** Waits until `check` answers something other than undefined (every 100 ms, up to `timeoutMs`). */
export const eventually = async <A>(check: () => A | undefined | Promise<A | undefined>, timeoutMs = 30_000) => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error(`not reached in ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
