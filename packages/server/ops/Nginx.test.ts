import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:https"
import { request as plainRequest } from "node:http"
import { networkInterfaces, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { MountJourney } from "@recur/testing"
import * as ServerProcess from "../test/support/serverProcess.js"

// docs/operations.md "Behind a TLS reverse proxy": the shipped nginx site (deploy/nginx/recur.conf)
// run by Debian's nginx as a child process of the test (its own prefix and main configuration in
// a temporary directory; only the ports, the certificate, the log directory and the upstream's
// port replaced) with a self-signed certificate made by openssl, in front of `recur serve` started
// with the shipped deploy/recur.env (its public URL and port set to the test's). Checked through
// the proxy: the API and the hosted checkout under /billing, session_url from the public URL, the
// card form posting through it, the client's address reaching the card-testing guard (and a
// forged X-Forwarded-For not), /metrics not exposed, and no link signature or query string in
// nginx's logs.

const nginx = process.env.NGINX_PATH ?? "/usr/sbin/nginx"
const deploy = fileURLToPath(new URL("../deploy/", import.meta.url))

/** An environment file as systemd reads one (`KEY=value`, `#` comments). */
const environmentFile = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)])
  )

/** `text` with `from` replaced by `to`, failing when `from` is not there (the shipped file changed). */
const replaced = (text: string, from: string, to: string) => {
  if (!text.includes(from)) throw new Error(`recur.conf no longer has ${JSON.stringify(from)}`)
  return text.replaceAll(from, to)
}

/**
 * This machine's addresses other than loopback (the card-testing guard does not count loopback
 * clients: the operator's own machine): each stands for another client of the proxy.
 */
const outside = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && !a.internal && !a.address.startsWith("fe80"))
  .map((a) => a!.address)

/**
 * `fetch` over HTTPS to the proxy, trusting the test's certificate, from the local address `from`
 * (to 127.0.0.1 from a loopback address, to `from` itself otherwise).
 */
const viaProxy =
  (ca: string, from: string) =>
  (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url)
    const headers = new Headers(init.headers)
    headers.set("host", url.host)
    const body = init.body === undefined || init.body === null ? undefined : String(init.body)
    const send = url.protocol === "https:" ? request : plainRequest
    return new Promise((resolve, reject) => {
      const req = send(
        {
          host: from.startsWith("127.") ? "127.0.0.1" : from,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? "GET",
          headers: Object.fromEntries(headers),
          localAddress: from,
          ...(url.protocol === "https:" ? { ca, servername: url.hostname } : {}),
          timeout: 60_000
        },
        (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (c: Buffer) => chunks.push(c))
          response.on("end", () => {
            const status = response.statusCode ?? 0
            const out = new Headers()
            for (const [k, v] of Object.entries(response.headers))
              if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(", ") : v)
            resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: out }))
          })
        }
      )
      req.on("error", reject)
      req.on("timeout", () => req.destroy(new Error("timed out")))
      req.end(body)
    })
  }

describe("behind nginx with TLS, under /billing", { timeout: 400_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "recur-nginx-"))
  const logs = join(dir, "logs")
  let server: ServerProcess.Running
  let proxy: ChildProcess
  let ca: string
  let https: number
  let http: number
  let base: string
  let proxyOutput = ""

  beforeAll(async () => {
    mkdirSync(logs)
    // a self-signed certificate for localhost, as an operator would test with before a real one
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem")
    ], { stdio: "ignore" })
    ca = readFileSync(join(dir, "cert.pem"), "utf8")
    https = await MountJourney.freePort()
    http = await MountJourney.freePort()
    base = `https://localhost:${https}/billing`
    // the shipped environment file, with this test's public URL, data directory and port
    const env = environmentFile(readFileSync(join(deploy, "recur.env"), "utf8"))
    expect(env.RECUR_TRUSTED_PROXIES).toBe("127.0.0.1,::1")
    server = await ServerProcess.start({
      env: { ...env, PORT: "0", RECUR_DATA_DIR: join(dir, "data"), RECUR_PUBLIC_URL: base }
    })
    let site = readFileSync(join(deploy, "nginx", "recur.conf"), "utf8")
    site = replaced(
      site,
      "listen 443 ssl;",
      [`127.0.0.1`, ...outside.map((a) => (a.includes(":") ? `[${a}]` : a))]
        .map((a) => `listen ${a}:${https} ssl;`)
        .join("\n    ")
    )
    site = replaced(site, "listen 80;", `listen 127.0.0.1:${http};`)
    site = replaced(site, "server 127.0.0.1:4000;", `server 127.0.0.1:${server.port};`)
    site = replaced(site, "/etc/letsencrypt/live/billing.example.com/fullchain.pem", join(dir, "cert.pem"))
    site = replaced(site, "/etc/letsencrypt/live/billing.example.com/privkey.pem", join(dir, "key.pem"))
    site = replaced(site, "/var/log/nginx/", `${logs}/`)
    writeFileSync(join(dir, "recur.conf"), site)
    // the main configuration Debian's /etc/nginx/nginx.conf would be: the site in its http block
    writeFileSync(
      join(dir, "nginx.conf"),
      [
        ...(process.getuid?.() === 0 ? ["user root;"] : []),
        "worker_processes 1;",
        `pid ${join(dir, "nginx.pid")};`,
        `error_log ${join(logs, "error.log")} warn;`,
        "events { worker_connections 128; }",
        "http {",
        `  access_log ${join(logs, "access.log")};`,
        `  include ${join(dir, "recur.conf")};`,
        "}"
      ].join("\n")
    )
    const args = ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(logs, "error.log")]
    const checked = spawnSync(nginx, [...args, "-t"], { encoding: "utf8" })
    expect(checked.status, checked.stderr).toBe(0)
    proxy = spawn(nginx, [...args, "-g", "daemon off;"])
    proxy.stderr!.on("data", (d) => (proxyOutput += String(d)))
    await ServerProcess.eventually(
      () =>
        viaProxy(ca, "127.0.0.1")(`${base}/healthz`).then(
          (r) => (r.status === 200 ? true : undefined),
          () => undefined
        ),
      30_000
    )
  }, 300_000)

  afterAll(async () => {
    if (proxy !== undefined && proxy.exitCode === null) {
      const exited = new Promise((resolve) => proxy.on("exit", resolve))
      proxy.kill("SIGQUIT")
      await exited
    }
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  const demo = async () => server.demo!
  const api = async (path: string) => {
    const response = await viaProxy(ca, "127.0.0.1")(`${base}${path}`, {
      headers: { authorization: `Bearer ${server.demo!.api_key}`, "request-id": `nginx-${Date.now()}-${Math.random()}` }
    })
    return { status: response.status, body: (await response.json()) as { code: string; data: any } }
  }

  it("the merchant's and the payer's journey: session_url under the public URL, the checkout page and its form through the proxy", async () => {
    const original = globalThis.fetch
    globalThis.fetch = viaProxy(ca, "127.0.0.2") as typeof fetch
    try {
      const { subscription_id } = await MountJourney.run({
        base,
        createMerchant: demo,
        subscriptionStatus: async (_merchant, id) => (await api(`/api/v1/subscription/${id}`)).body.data.subscription.status
      })
      expect(subscription_id).toMatch(/^sub/)
    } finally {
      globalThis.fetch = original
    }
  })

  it("the card-testing guard counts the client's address nginx saw: 30 declines, then 429; a forged X-Forwarded-For changes nothing; another client is not held", async () => {
    expect(outside.length, "a network address other than loopback (the guard does not count loopback)").toBeGreaterThan(0)
    const tester = await MountJourney.cardTesting({
      base,
      createMerchant: demo,
      fetch: viaProxy(ca, outside[0]!),
      headers: { "x-forwarded-for": "203.0.113.9" }
    })
    expect(tester).toEqual(MountJourney.limitedCardTesting)
    // another client: this machine's second address when it has one (IPv6), loopback otherwise
    const other = await MountJourney.cardTesting(
      { base, createMerchant: demo, fetch: viaProxy(ca, outside[1] ?? "127.0.0.6") },
      10
    )
    expect(other).toEqual(Array(10).fill(402))
  })

  it("/billing/metrics is not exposed; plain HTTP redirects to HTTPS", async () => {
    expect((await viaProxy(ca, "127.0.0.1")(`${base}/metrics`)).status).toBe(404)
    const redirect = await viaProxy(ca, "127.0.0.1")(`http://localhost:${http}/billing/healthz`)
    expect(redirect.status).toBe(301)
    expect(redirect.headers.get("location")).toBe("https://localhost/billing/healthz")
  })

  it("nginx's logs hold no link signature and no query string, even when Recur is down", async () => {
    const invoices = await api("/api/v1/invoices")
    const link: string = invoices.body.data.list.find((i: { hosted_invoice_url: string | null }) => i.hosted_invoice_url)
      .hosted_invoice_url
    expect(link.startsWith(`${base}/invoice/`)).toBe(true)
    const [, invoiceId, signature] = /\/invoice\/([^/]+)\/([^/?#]+)$/.exec(link)!
    const send = viaProxy(ca, "127.0.0.7")
    expect((await send(link)).status).toBe(200)
    expect((await send(`${link}/pdf`)).status).toBe(200)
    // a processor's client secret in a return URL's query, and a token
    const secretQuery = "payment_intent_client_secret=pi_3Ops_secret_QueryLeak&token=tok-query-leak"
    await send(`${base}/checkout/cs_none?${secretQuery}`)
    // the merchant API's own invoice route has no signature: its path is kept whole
    await api(`/api/v1/invoice/${invoiceId}`)
    // Recur down: nginx answers 502, and its error log would name the whole request line
    expect(await server.stop()).toBe(0)
    expect((await send(link)).status).toBe(502)

    // nginx writes a request's access line after its response (its log phase): on a loaded
    // machine the 502's line may land a moment after the client has read the answer
    const readAccess = () =>
      readFileSync(join(logs, "recur.access.log"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { client: string; path: string; status: number })
    let lines = readAccess()
    for (let waited = 0; waited < 10_000 && !lines.some((l) => l.client === "127.0.0.7" && l.status === 502); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      lines = readAccess()
    }
    const paths = lines.filter((l) => l.client === "127.0.0.7").map((l) => `${l.status} ${l.path}`)
    expect(paths).toEqual([
      `200 /billing/invoice/${invoiceId}/[redacted]`,
      `200 /billing/invoice/${invoiceId}/[redacted]/pdf`,
      "404 /billing/checkout/cs_none",
      `502 /billing/invoice/${invoiceId}/[redacted]`
    ])
    expect(lines.some((l) => l.path === `/billing/api/v1/invoice/${invoiceId}`)).toBe(true)
    const everyLog = ["recur.access.log", "recur.error.log", "error.log", "access.log"]
      .map((f) => {
        try {
          return readFileSync(join(logs, f), "utf8")
        } catch {
          return ""
        }
      })
      .join("\n")
    expect(everyLog).toContain(invoiceId)
    expect(everyLog).not.toContain(signature)
    expect(everyLog).not.toContain("QueryLeak")
    expect(everyLog).not.toContain("tok-query-leak")
    expect(proxyOutput).not.toContain(signature)
  })
})
