import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as ServerProcess from "./support/serverProcess.js"

// docs/operations.md "Running under systemd": the shipped unit (deploy/recur.service) is a valid
// unit for systemd, and its ExecStart with the shipped environment file (deploy/recur.env) starts
// the server, which SIGTERM (the unit's KillSignal) stops with exit 0 after the request in flight
// was answered. systemd itself does not run in the test's container: the command line and the
// environment are the unit's own, with the paths of an installed copy mapped onto this checkout.

const deploy = fileURLToPath(new URL("../deploy/", import.meta.url))
const unitText = readFileSync(join(deploy, "recur.service"), "utf8")

/** The unit's `Key=value` lines of `[section]` (a key given twice keeps both, in order). */
const unitSection = (section: string) => {
  const body = unitText.split(/^\[/m).find((s) => s.startsWith(`${section}]`)) ?? ""
  return body
    .split("\n")
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const)
}

/** An environment file as systemd reads one: `KEY=value` lines, `#` comments, blank lines. */
const environmentFile = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#") && !l.startsWith(";"))
      .map((l) => [l.slice(0, l.indexOf("=")).trim(), l.slice(l.indexOf("=") + 1).trim()])
  )

describe("the systemd unit", { timeout: 300_000 }, () => {
  const service = Object.fromEntries(unitSection("Service"))

  // systemd's own check where systemd is installed (Debian, CI); elsewhere (macOS) the tests below
  const systemdAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0
  if (systemdAnalyze)
    it("systemd-analyze verify finds nothing to say about it, and does about a broken copy", () => {
      const verified = spawnSync("systemd-analyze", ["verify", join(deploy, "recur.service")], { encoding: "utf8" })
      expect([verified.status, verified.stderr.trim()]).toEqual([0, ""])
      // the check checks: a misspelt key and a missing program are both reported
      const dir = mkdtempSync(join(tmpdir(), "recur-unit-"))
      try {
        const broken = join(dir, "recur.service")
        writeFileSync(
          broken,
          unitText
            .replace(/^Restart=/m, "Restrat=")
            .replace(/^ExecStart=\/usr\/bin\/node /m, "ExecStart=/usr/bin/no-such-node ")
        )
        const refused = spawnSync("systemd-analyze", ["verify", broken], { encoding: "utf8" })
        expect(refused.status).not.toBe(0)
        expect(refused.stderr).toContain("Unknown key 'Restrat'")
        expect(refused.stderr).toContain("/usr/bin/no-such-node is not executable")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })

  it("restarts on failure only, stops by SIGTERM, keeps its data directory to its user", () => {
    expect(service).toMatchObject({
      Type: "simple",
      Restart: "on-failure",
      KillSignal: "SIGTERM",
      EnvironmentFile: "/etc/recur/recur.env",
      StateDirectory: "recur",
      StateDirectoryMode: "0700",
      UMask: "0077"
    })
    const env = environmentFile(readFileSync(join(deploy, "recur.env"), "utf8"))
    // the StateDirectory is the data directory, nginx/recur.conf's upstream is PORT
    expect(env).toMatchObject({ RECUR_DATA_DIR: "/var/lib/recur", PORT: "4000" })
    expect(readFileSync(join(deploy, "nginx", "recur.conf"), "utf8")).toContain(`server 127.0.0.1:${env.PORT};`)
  })

  it("its ExecStart with its environment file serves; SIGTERM answers the request in flight, then exits 0", async () => {
    const env = environmentFile(readFileSync(join(deploy, "recur.env"), "utf8"))
    // the installed copy's paths onto this checkout (sources, not a build: --conditions=source)
    const command = service
      .ExecStart!.split(/\s+/)
      .flatMap((word) =>
        word === "/usr/bin/node"
          ? [process.execPath, "--conditions=source"]
          : [word.replace("/opt/recur/node_modules/@recur/server/", fileURLToPath(new URL("../", import.meta.url)))]
      )
    expect(command.slice(-2)).toEqual([fileURLToPath(new URL("../bin/recur.mjs", import.meta.url)), "serve"])
    const dataDir = mkdtempSync(join(tmpdir(), "recur-unit-data-"))
    try {
      // the StateDirectory's place, and any free port (PORT=4000 may be taken on this machine)
      const server = await ServerProcess.start({ command, env: { ...env, RECUR_DATA_DIR: dataDir, PORT: "0" } })
      expect(server.output()).toMatch(
        /Recur listening on port \d+: https:\/\/billing\.example\.com\/billing \(API docs: https:\/\/billing\.example\.com\/billing\/docs\)/
      )
      // a request whose body is still arriving when SIGTERM comes
      const body = JSON.stringify({ payer_id: "in-flight" })
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${server.local}/api/v1/front/customer/create`,
          {
            method: "POST",
            headers: {
              authorization: `Bearer ${server.demo!.api_key}`,
              "request-id": "drain-1",
              "content-type": "application/json",
              "content-length": Buffer.byteLength(body)
            }
          },
          (response) => {
            let text = ""
            response.on("data", (d) => (text += String(d)))
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }))
          }
        )
        req.on("error", reject)
        req.write(body.slice(0, 5))
        setTimeout(() => {
          server.child.kill("SIGTERM")
          setTimeout(() => req.end(body.slice(5)), 500)
        }, 300)
      })
      const answered = await answer
      expect(answered.status, answered.body).toBe(200)
      expect(await server.stop()).toBe(0)
      // stopped: nothing listens on the port any more
      await expect(fetch(`${server.local}/healthz`)).rejects.toThrow()
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
