import { createApp } from "./app.js"

const { server } = createApp({ storage: { pglite: "./.recur-mount" } })
server.listen(3000, () => console.log("host app on http://localhost:3000 (Recur under /billing)"))
