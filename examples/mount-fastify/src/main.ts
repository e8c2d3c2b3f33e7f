import { createApp } from "./app.js"

const port = Number(process.env.PORT ?? 3000)
const { app } = await createApp({
  storage: { pglite: "./.recur-fastify" },
  publicUrl: `http://localhost:${port}/billing`
})
await app.listen({ port })
console.log(`Fastify app on http://localhost:${port} (Recur under /billing)`)
