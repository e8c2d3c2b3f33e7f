import { createApp } from "./app.js"

const port = Number(process.env.PORT ?? 3000)
const { app } = await createApp({
  storage: { pglite: "./.recur-express" },
  publicUrl: `http://localhost:${port}/billing`
})
app.listen(port, () => console.log(`Express app on http://localhost:${port} (Recur under /billing)`))
