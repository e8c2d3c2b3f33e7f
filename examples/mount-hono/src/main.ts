import { serve } from "@hono/node-server"
import { createApp } from "./app.js"

const port = Number(process.env.PORT ?? 3000)
const { app } = await createApp({ storage: { pglite: "./.recur-hono" }, publicUrl: `http://localhost:${port}/billing` })
serve({ fetch: app.fetch, port }, () => console.log(`Hono app on http://localhost:${port} (Recur under /billing)`))
