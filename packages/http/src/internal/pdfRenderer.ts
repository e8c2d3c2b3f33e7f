/**
 * Invoice PDFs for anonymous GETs, without letting them stall other requests: each document is
 * rendered once (an issued invoice does not change; a later state of it — paid — is a new stamp
 * of the same invoice, rendered once more) and then served from a bounded in-process cache;
 * concurrent requests for one document share its render; renders run one at a time in a bounded
 * queue that yields to the event loop before each one, so whatever else the process serves runs
 * between two renders. Past the queue's bound a request is refused (`Busy`: the route answers 503
 * with `Retry-After`) rather than queued without end.
 */

/** Renders one document (the real renderer: `InvoiceDocument.invoicePdf`). */
export type Render<D, L> = (doc: D, language: L) => Promise<Uint8Array>

/** The queue is full: try again in a moment. */
export class Busy extends Error {
  constructor() {
    super("Too many invoice PDFs are being rendered; retry in a moment.")
  }
}

export interface Limits {
  /** Documents kept (least recently served go first). */
  readonly maxEntries: number
  /** Bytes kept in all. */
  readonly maxBytes: number
  /** Renders waiting at once; past it, `Busy`. */
  readonly maxQueued: number
}

export const defaultLimits: Limits = { maxEntries: 1_000, maxBytes: 64 * 1024 * 1024, maxQueued: 64 }

export interface Stats {
  /** Renders started since the renderer was made. */
  readonly renders: number
  readonly cached: number
  readonly cachedBytes: number
  readonly queued: number
}

/** Lets the event loop run whatever is due (I/O, timers, other requests) before going on. */
const yieldToEventLoop = () =>
  new Promise<void>((resolve) =>
    typeof globalThis.setImmediate === "function" ? globalThis.setImmediate(resolve) : setTimeout(resolve, 0)
  )

/**
 * A renderer keyed by `keyOf(doc, language)` (the invoice id and language), whose entry is
 * valid while `stampOf(doc)` (what the document states) is unchanged.
 */
export const make = <D, L>(
  render: Render<D, L>,
  keyOf: (doc: D, language: L) => string,
  stampOf: (doc: D) => string,
  limits: Limits = defaultLimits
) => {
  const cache = new Map<string, { readonly stamp: string; readonly bytes: Uint8Array }>()
  const inFlight = new Map<string, Promise<Uint8Array>>()
  const queue: Array<() => Promise<void>> = []
  let running = false
  let cachedBytes = 0
  let renders = 0

  const remember = (key: string, stamp: string, bytes: Uint8Array) => {
    const old = cache.get(key)
    if (old) {
      cache.delete(key)
      cachedBytes -= old.bytes.byteLength
    }
    if (bytes.byteLength > limits.maxBytes) return
    cache.set(key, { stamp, bytes })
    cachedBytes += bytes.byteLength
    for (const [k, v] of cache) {
      if (cache.size <= limits.maxEntries && cachedBytes <= limits.maxBytes) break
      cache.delete(k)
      cachedBytes -= v.bytes.byteLength
    }
  }

  const drain = async () => {
    if (running) return
    running = true
    try {
      while (queue.length > 0) {
        await yieldToEventLoop()
        await queue.shift()!()
      }
    } finally {
      running = false
    }
  }

  const pdf = (doc: D, language: L): Promise<Uint8Array> => {
    const key = keyOf(doc, language)
    const stamp = stampOf(doc)
    const hit = cache.get(key)
    if (hit && hit.stamp === stamp) {
      // most recently served last: the first in the map is the first to go
      cache.delete(key)
      cache.set(key, hit)
      return Promise.resolve(hit.bytes)
    }
    const flightKey = `${key}\u0000${stamp}`
    const pending = inFlight.get(flightKey)
    if (pending) return pending
    if (queue.length >= limits.maxQueued) return Promise.reject(new Busy())
    const rendered = new Promise<Uint8Array>((resolve, reject) => {
      queue.push(async () => {
        renders++
        try {
          const bytes = await render(doc, language)
          remember(key, stamp, bytes)
          resolve(bytes)
        } catch (e) {
          reject(e)
        } finally {
          inFlight.delete(flightKey)
        }
      })
    })
    inFlight.set(flightKey, rendered)
    void drain()
    return rendered
  }

  const stats = (): Stats => ({ renders, cached: cache.size, cachedBytes, queued: queue.length })
  return { pdf, stats }
}
