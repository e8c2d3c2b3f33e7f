import { createApp } from "./app.js"

const port = Number(process.env.PORT ?? 3000)
const { server } = await createApp({
  storage: { pglite: "./.recur-mount" },
  publicUrl: `http://localhost:${port}/billing`
})
server.listen(port, () => console.log(`host app on http://localhost:${port} (Recur under /billing)`))
