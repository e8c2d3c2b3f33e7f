import { describe, expect, it } from "@effect/vitest"
import { createBilling } from "@recur/embedded"
import { spawn } from "node:child_process"
import { createHmac } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { readBack, type Written, write } from "./fixtures/restart.js"

const root = fileURLToPath(new URL("../../..", import.meta.url))
const script = fileURLToPath(new URL("./fixtures/restart.ts", import.meta.url))

/** A webhook receiver on port 0, keeping every request's headers and body. */
const receiver = async () => {
  const got: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += String(c)))
    req.on("end", () => {
      got.push({ headers: req.headers, body })
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The Standard Webhooks signature of a delivery under the endpoint's `whsec_` secret. */
const signedWith = (secret: string, headers: Record<string, string | string[] | undefined>, body: string) => {
  const expected = createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
    .update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`)
    .digest("base64")
  return String(headers["webhook-signature"]).split(" ").includes(`v1,${expected}`)
}
/** Recur's own signature of a delivery under the merchant's API key. */
const signedWithKey = (key: string, headers: Record<string, string | string[] | undefined>, body: string) =>
  headers["x-signature"] === createHmac("sha256", key).update(`${headers["x-timestamp"]}.${body}`).digest("hex")

/** Everything written before the restart reads back after it. */
const expectReadBack = async (dir: string, written: Written, hooks: Awaited<ReturnType<typeof receiver>>) => {
  const back = await readBack(dir, written)
  expect(back.authenticated).toBe(200)
  expect(back.customers).toEqual([written.customerId])
  // the stored answer is replayed (decrypted), not run again
  expect(back.replay).toEqual([200, written.customerId])
  expect(back.page[0]).toBe(200)
  expect(back.page[1]).toContain(written.invoiceNumber)
  expect(back.pdf).toEqual([200, "application/pdf"])
  expect(back.credentials).toMatchObject({
    secret_key: written.stripeSecretKey,
    webhook_secret: written.stripeWebhookSecret
  })
  // the events written before the restart are delivered after it, signed with the secret shown at creation
  expect(back.delivered).toBeGreaterThan(0)
  expect(hooks.got.length).toBeGreaterThan(0)
  for (const { headers, body } of hooks.got) {
    expect(signedWith(written.endpointSecret, headers, body)).toBe(true)
    expect(signedWithKey(written.apiKey, headers, body)).toBe(true)
  }
}

describe("createBilling on a PGlite directory without masterKey: nothing is lost on restart", () => {
  it("a second createBilling on the same directory reads everything back; the key is kept beside the data", async () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-restart-"))
    const hooks = await receiver()
    try {
      const written = await write(dir, hooks.url)
      const key = join(dir, "master.key")
      expect(readFileSync(key, "utf8")).toMatch(/^[0-9a-f]{64}$/)
      expect(statSync(key).mode & 0o777).toBe(0o600)
      await expectReadBack(dir, written, hooks)
      // a lost key is never replaced by a new one beside the data: the start is refused, nothing written
      renameSync(key, `${key}.bak`)
      await expect(createBilling({ storage: { pglite: dir } })).rejects.toThrow(
        /master\.key is missing, but .* holds data encrypted with it/
      )
      expect(existsSync(key)).toBe(false)
      renameSync(`${key}.bak`, key)
    } finally {
      await hooks.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("written by another process that then exits, read back by this one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "recur-restart-child-"))
    const hooks = await receiver()
    try {
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", script, dir, hooks.url], {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let err = ""
      child.stdout.on("data", (d) => (out += String(d)))
      child.stderr.on("data", (d) => (err += String(d)))
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
      expect(code, err).toBe(0)
      const written = JSON.parse(out.trim().split("\n").at(-1)!) as Written
      await expectReadBack(dir, written, hooks)
    } finally {
      await hooks.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("PostgreSQL without masterKey is refused with a clear error; memory storage keeps a random key", async () => {
    await expect(createBilling({ storage: { postgres: "postgres://nobody@127.0.0.1:9/none" } })).rejects.toThrow(
      /masterKey is required with \{ postgres \} storage/
    )
    const memory = await createBilling({ storage: "memory" })
    await memory.close()
  }, 60_000)
})
