/**
 * Master key rotation, the stored half: every secret at rest moved under the ring's current key
 * in one storage transaction — API keys, processor keys and webhook secrets, webhook endpoint
 * secrets, stored idempotent answers — and every issued invoice's links signed again under it
 * (the links sent before keep opening through the previous key's grace; the API then hands out
 * the new ones). Run it with a `Secrets` whose current key is the new one and whose ring holds
 * the old one: what is already under the current key is left as it is, so running it again
 * (after a crash) finishes the job and changes nothing more.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Entities from "../kernel/Entities.js"
import * as Invoice from "../invoices/Invoice.js"
import * as Store from "../kernel/Store.js"
import * as Merchant from "./Merchant.js"
import * as Secrets from "./Secrets.js"

/**
 * How many records a rotation changed, by kind.
 *
 * @since 0.1.0
 */
export interface Resealed {
  readonly api_keys: number
  readonly payment_processors: number
  readonly webhook_endpoints: number
  readonly idempotent_answers: number
  readonly invoice_links: number
}

const PAGE = 500

/** Every record of an entity, page by page: `change` says what a record becomes (undefined: unchanged). */
const rewriteAll = <A>(
  repo: Store.Repository<A>,
  id: (a: A) => string,
  change: (a: A) => Effect.Effect<A | undefined>
) =>
  Effect.gen(function* () {
    let after: string | undefined
    let changed = 0
    while (true) {
      const page = yield* repo.scan({ after, limit: PAGE })
      if (page.length === 0) return changed
      const updates: Array<{ readonly value: A; readonly expectedVersion: number }> = []
      for (const r of page) {
        const next = yield* change(r.value)
        if (next !== undefined) updates.push({ value: next, expectedVersion: r.version })
      }
      yield* Effect.orDie(repo.updateMany(updates))
      changed += updates.length
      after = id(page[page.length - 1]!.value)
    }
  })

/** A signed invoice link with its token replaced (the page, or its `/pdf`). */
const resign = (url: string | null, invoiceId: string, token: string): string | null => {
  if (url === null) return null
  const m = /^(.*\/invoice\/[^/]+\/)[^/]+(\/pdf)?$/.exec(url)
  return m && url.includes(`/invoice/${invoiceId}/`) ? `${m[1]}${token}${m[2] ?? ""}` : url
}

/**
 * Moves every stored secret under the current key and signs every invoice's links again, in one
 * transaction: a failure or a crash leaves all of it as it was.
 *
 * @since 0.1.0
 */
export const resealAll = Effect.fn("MasterKeyRotation.resealAll")(function* () {
  const storage = yield* Store.Storage
  const secrets = yield* Secrets.Secrets
  const resealed = (ciphertext: string) => Effect.map(secrets.reseal(ciphertext), (c) => (c === ciphertext ? null : c))
  return yield* storage.withTransaction(
    Effect.gen(function* () {
      const api_keys = yield* rewriteAll(
        storage.repository(Entities.apiKey),
        (k) => k.id,
        (k) => Effect.map(resealed(k.ciphertext), (c) => (c === null ? undefined : { ...k, ciphertext: c }))
      )
      const payment_processors = yield* rewriteAll(
        storage.repository(Entities.merchant),
        (m) => m.merchant_id,
        (m) =>
          Effect.gen(function* () {
            const p = m.payment_processor
            if (p === null) return undefined
            const key = yield* resealed(p.secret_key_ciphertext)
            const hook = p.webhook_secret_ciphertext === null ? null : yield* resealed(p.webhook_secret_ciphertext)
            if (key === null && hook === null) return undefined
            return new Merchant.Merchant({
              ...m,
              payment_processor: new Merchant.PaymentProcessor({
                ...p,
                secret_key_ciphertext: key ?? p.secret_key_ciphertext,
                webhook_secret_ciphertext: hook ?? p.webhook_secret_ciphertext
              })
            })
          })
      )
      const webhook_endpoints = yield* rewriteAll(
        storage.repository(Entities.webhookEndpoint),
        (e) => e.endpoint.id,
        (e) =>
          Effect.map(resealed(e.secret_ciphertext), (c) => (c === null ? undefined : { ...e, secret_ciphertext: c }))
      )
      const invoice_links = yield* rewriteAll(
        storage.repository(Entities.invoice),
        (i) => i.invoice_id,
        (i) =>
          Effect.map(secrets.sign(`invoice:${i.merchant_id}:${i.invoice_id}`), (token) => {
            const page = resign(i.hosted_invoice_url, i.invoice_id, token)
            const pdf = resign(i.invoice_pdf, i.invoice_id, token)
            return page === i.hosted_invoice_url && pdf === i.invoice_pdf
              ? undefined
              : new Invoice.Invoice({ ...i, hosted_invoice_url: page, invoice_pdf: pdf }, { disableChecks: true })
          })
      )
      // the answers replayed for a Request-Id: plain JSON (written before they were encrypted) stays
      let idempotent_answers = 0
      let after: { readonly merchant_id: string; readonly request_id: string } | undefined
      while (true) {
        const page = yield* storage.idempotency.scanCompleted({ after, limit: PAGE })
        if (page.length === 0) break
        for (const r of page) {
          if (r.response === null || r.response.startsWith("{")) continue
          const c = yield* resealed(r.response)
          if (c === null) continue
          yield* storage.idempotency.complete(r.merchant_id, r.request_id, r.status ?? 200, c, r.expires_at)
          idempotent_answers++
        }
        after = page[page.length - 1]!
      }
      return { api_keys, payment_processors, webhook_endpoints, idempotent_answers, invoice_links } satisfies Resealed
    })
  )
})
