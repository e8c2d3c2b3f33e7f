import { describe, expect, it } from "@effect/vitest"
import { Pg } from "@recur/sql"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { databaseUrl, report, size } from "./harness.js"

// kill -9 the server while it handles POSTs that charge or refund money, restart it, and retry
// every request with the same Request-Id until it answers: each ends exactly once.

const main = fileURLToPath(new URL("../../server/src/main.ts", import.meta.url))
const root = fileURLToPath(new URL("../../..", import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("crash mid-request", () => {
  it("kill -9 the server during checkout payments, upgrades and refunds; retries with the same Request-Id end each exactly once", async () => {
    const k = size(12, 100)
    const kills = size(3, 10)
    // port 0: each start listens on a port the system picks and prints it (no race for a port)
    let base = ""
    const dataDir = mkdtempSync(join(tmpdir(), "recur-crashreq-"))
    const masterKey = [...crypto.getRandomValues(new Uint8Array(32))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("")
    const env = {
      ...process.env,
      PORT: "0",
      RECUR_MASTER_KEY: masterKey,
      RECUR_DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, RECUR_DATABASE_SCHEMA: Pg.freshSchemaName("recur_crashreq") } : {})
    }
    let server: ChildProcess | undefined
    let key = ""
    const start = async () => {
      const p = spawn(process.execPath, ["--conditions=source", "--import", "tsx", main, "serve"], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      p.stdout!.on("data", (d) => (out += String(d)))
      p.stderr!.on("data", (d) => (out += String(d)))
      for (
        let i = 0;
        i < 600 && !(out.includes("listening") && (out.includes("Demo API key") || out.includes("existing data")));
        i++
      )
        await sleep(100)
      const m = /Demo API key: (sk_test_\w+)/.exec(out)
      if (m) key = m[1]!
      const listening = /Recur listening on port (\d+)/.exec(out)
      if (!listening) throw new Error(`the server did not say where it listens: ${out}`)
      base = `http://127.0.0.1:${listening[1]}`
      server = p
    }
    const kill = async () => {
      const p = server!
      const gone = new Promise((r) => p.once("exit", r))
      p.kill("SIGKILL")
      await gone
    }
    const send = async (
      method: string,
      path: string,
      requestId: string,
      body?: unknown,
      extra: Record<string, string> = {}
    ) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          "request-id": requestId,
          "content-type": "application/json",
          ...extra
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
      })
      return { status: res.status, body: (await res.json()) as any }
    }
    try {
      await start()
      expect(key).toMatch(/^sk_test_/)
      const product = (await send("POST", "/api/v1/products", "setup-1", { product_name: "Pro" })).body.data.product_id
      const price = async (v: string, id: string) =>
        (
          await send("POST", "/api/v1/prices", id, {
            name: v,
            product_id: product,
            currency: "USD",
            billing_type: "recurring",
            price_type: "flat_price",
            price_plan: { billing_cycle_unit: "month", base_price_val: v }
          })
        ).body.data.price_id as string
      const basic = await price("10.00", "setup-2")
      const pro = await price("20.00", "setup-3")
      const sessions: Array<string> = []
      for (let i = 0; i < 2 * k; i++)
        sessions.push(
          (
            await send("POST", "/api/v1/session", `session-${i}`, {
              payer_id: `crash-${i}`,
              line_items: [{ price_id: basic }]
            })
          ).body.data.session_id
        )
      const card = { card_number: "4242424242424242", exp_month: "12", exp_year: "2030", cvc: "123" }
      const paidFirst = sessions.slice(0, k)
      const trades: Array<string> = []
      for (const s of paidFirst)
        trades.push(
          (await send("POST", `/checkout/${s}/pay`, `pay-${s}`, card, { accept: "application/json" })).body.data
            .trade_id
        )
      const subs: Array<string> = []
      for (const t of trades)
        subs.push(
          (await send("GET", `/api/v1/subscription?search_type=trade_id&search_value=${t}`, `find-${t}`)).body.data
            .list[0].id
        )

      // the requests that move money, each with its own Request-Id
      const requests = [
        ...sessions.slice(k).map((s) => ({
          method: "POST",
          path: `/checkout/${s}/pay`,
          id: `pay-${s}`,
          body: card,
          extra: { accept: "application/json" },
          kind: "pay" as const
        })),
        ...subs.map((s) => ({
          method: "POST",
          path: `/api/v1/subscription/${s}`,
          id: `upgrade-${s}`,
          body: { price_id: pro, effective_type: "immediate", proration: "immediate" },
          extra: {},
          kind: "upgrade" as const
        })),
        ...trades.map((t) => ({
          method: "POST",
          path: "/api/v1/refund",
          id: `refund-${t}`,
          body: { trade_id: t, amount: "1.00" },
          extra: {},
          kind: "refund" as const
        }))
      ]
      const final = new Map<string, { status: number; body: any }>()
      let crashedAnswers = 0
      for (let round = 0; round < kills; round++) {
        const pending = requests.filter((r) => !final.has(r.id))
        const inflight = pending.map((r) =>
          send(r.method, r.path, r.id, r.body, r.extra).then(
            (a) => {
              if (a.status !== 409 || a.body.code !== "request_in_progress") final.set(r.id, a)
            },
            () => {
              crashedAnswers++
            }
          )
        )
        await sleep(50 + Math.random() * 300)
        await kill()
        await Promise.all(inflight)
        await start()
      }
      // retry until every request has its answer (a crashed request's lock expires after 60 s)
      const deadline = Date.now() + 180_000
      while (final.size < requests.length && Date.now() < deadline) {
        for (const r of requests.filter((x) => !final.has(x.id))) {
          const a = await send(r.method, r.path, r.id, r.body, r.extra)
          if (a.status !== 409 || a.body.code !== "request_in_progress") final.set(r.id, a)
        }
        if (final.size < requests.length) await sleep(2_000)
      }
      expect(final.size).toBe(requests.length)
      for (const r of requests) {
        const a = final.get(r.id)!
        // a payment retried after it succeeded is refused as already paid — still one payment; a
        // refund of the first payment that its subscription's upgrade overtook is refused: the
        // upgrade's credit moved what that payment held into the upgrade's invoice (nothing comes
        // back twice), so `amount` is over what the trade still holds
        const ok =
          a.status === 200 ||
          (r.kind === "pay" && a.status === 409 && a.body.code === "state_conflict") ||
          (r.kind === "refund" && a.status === 400 && a.body.data?.param === "amount")
        expect([r.id, ok ? "ok" : `${a.status} ${JSON.stringify(a.body)}`]).toEqual([r.id, "ok"])
      }
      // exactly once, in the books
      const all = async (path: string) => {
        const out: Array<any> = []
        let cursor = ""
        for (;;) {
          const page = (
            await send(
              "GET",
              `${path}${path.includes("?") ? "&" : "?"}limit=100${cursor ? `&starting_after=${cursor}` : ""}`,
              `list-${Math.random()}`
            )
          ).body.data
          out.push(...page.list)
          if (!page.has_more) return out
          const last = page.list.at(-1)
          cursor = last.id ?? last.trade_id ?? last.refund_id ?? last.invoice_id
        }
      }
      const refunds = await all("/api/v1/refunds")
      const refunded = requests.filter((r) => r.kind === "refund" && final.get(r.id)!.status === 200)
      expect(refunds.length).toBe(refunded.length)
      expect(new Set(refunds.map((r) => r.trade_id))).toEqual(new Set(refunded.map((r) => (r.body as any).trade_id)))
      for (const r of refunds) expect([r.refund_amount, r.refund_status]).toEqual(["1.00", "succeeded"])
      const upgrades = await all("/api/v1/invoices?invoice_types=upgrade")
      expect(upgrades.length).toBe(k)
      expect(new Set(upgrades.map((i) => i.subscription_id)).size).toBe(k)
      const allTrades = await all("/api/v1/trades")
      for (const s of sessions)
        expect(allTrades.filter((t) => t.session_id === s && t.trade_status === "succeeded")).toHaveLength(1)
      for (const s of subs)
        expect((await send("GET", `/api/v1/subscription/${s}`, `get-${s}`)).body.data.subscription.price_id).toBe(pro)
      report(
        `crash mid-request: ${requests.length} money-moving POSTs (${k} payments, ${k} upgrades, ${k} refunds), ${kills} kill -9 of the server, ${crashedAnswers} requests cut off; after retries with the same Request-Id: ${refunds.length} refunds, ${upgrades.length} upgrade invoices, 1 succeeded trade per session`
      )
    } finally {
      if (server && server.exitCode === null) server.kill("SIGKILL")
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
