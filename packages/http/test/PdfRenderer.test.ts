import { describe, expect, it } from "@effect/vitest"
import * as PdfRenderer from "../src/internal/pdfRenderer.js"

// The render queue behind invoice PDFs, with a render that holds the thread as pdfkit does:
// others run between two renders, the queue and the cache are bounded.

/** A synchronous, CPU-bound render of `doc` (as pdfkit lays a document out), logged. */
const busyRender = (log: Array<string>) => (doc: string, language: string) => {
  log.push(`render ${doc}`)
  let x = 0
  for (let i = 0; i < 200_000; i++) x += i % 7
  return Promise.resolve(new TextEncoder().encode(`${doc}/${language}/${x}`))
}

const renderer = (log: Array<string>, limits?: PdfRenderer.Limits) =>
  PdfRenderer.make(
    busyRender(log),
    (doc: string, language: string) => `${doc} ${language}`,
    (doc) => doc,
    limits
  )

describe("invoice PDF render queue", () => {
  it("renders one document at a time and lets other work run between two renders", async () => {
    const log: Array<string> = []
    const r = renderer(log)
    const burst = Array.from({ length: 20 }, (_, i) => r.pdf(`inv_${i}`, "en"))
    // another request arrives once the burst is queued: it runs after at most one render
    const other = new Promise<void>((resolve) =>
      setImmediate(() => {
        log.push("other request")
        resolve()
      })
    )
    await Promise.all([...burst, other])
    expect(log.filter((l) => l.startsWith("render"))).toHaveLength(20)
    expect(log.indexOf("other request")).toBeLessThanOrEqual(1)
  })

  it("renders a document once: concurrent requests share the render, later ones are served from the cache", async () => {
    const log: Array<string> = []
    const r = renderer(log)
    const same = await Promise.all(Array.from({ length: 50 }, () => r.pdf("inv_a", "de")))
    expect(new Set(same.map((b) => new TextDecoder().decode(b))).size).toBe(1)
    await r.pdf("inv_a", "de")
    expect(r.stats().renders).toBe(1)
  })

  it("the queue is bounded: past it a request is refused (Busy), not queued; the cache is bounded in entries and bytes", async () => {
    const log: Array<string> = []
    const r = renderer(log, { maxEntries: 5, maxBytes: 1_000_000, maxQueued: 8 })
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => r.pdf(`inv_${i}`, "en")))
    const refused = results.filter((x) => x.status === "rejected")
    expect(refused.length).toBeGreaterThan(0)
    for (const x of refused) expect((x as PromiseRejectedResult).reason).toBeInstanceOf(PdfRenderer.Busy)
    expect(r.stats()).toMatchObject({ cached: 5, queued: 0 })
    const small = renderer([], { maxEntries: 100, maxBytes: 40, maxQueued: 100 })
    await Promise.all(Array.from({ length: 10 }, (_, i) => small.pdf(`inv_${i}`, "en")))
    expect(small.stats().cachedBytes).toBeLessThanOrEqual(40)
    expect(small.stats().cached).toBeGreaterThan(0)
  })
})
