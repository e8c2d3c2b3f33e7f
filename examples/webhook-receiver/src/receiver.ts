// A merchant's webhook receiver on plain node:http: verify, de-duplicate, drop stale, answer fast.
import { verifyWebhook, type WebhookEvent } from "@recur/webhooks/verify"
import { createServer } from "node:http"

export const createReceiver = (options: { keys: () => string[]; onEvent: (event: WebhookEvent) => void }) => {
  const seen = new Set<string>() // event ids already handled (delivery is at-least-once); use your database in production
  const latest = new Map<string, number>() // highest `sequence` per object, to drop out-of-order updates
  return createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const result = verifyWebhook({ body: Buffer.concat(chunks), headers: req.headers, keys: options.keys() })
      if (!result.ok) return void res.writeHead(400).end(result.reason)
      const event = result.event
      if (!seen.has(event.id)) {
        seen.add(event.id)
        const key = `${event.type.split(".")[1]}:${event.data?.id ?? event.data?.trade_id ?? event.data?.invoice_id ?? event.id}`
        if ((latest.get(key) ?? 0) < event.sequence) {
          latest.set(key, event.sequence)
          options.onEvent(event)
        }
      }
      res.writeHead(200).end("ok") // answer within 10 s; do slow work after answering
    })
  })
}
