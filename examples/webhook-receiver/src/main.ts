// RECUR_API_KEY=sk_test_… [RECUR_PREVIOUS_API_KEY=…] PORT=8080 pnpm start
import { createReceiver } from "./receiver.js"

const keys = () => [process.env.RECUR_API_KEY, process.env.RECUR_PREVIOUS_API_KEY].filter((k): k is string => !!k)
const port = Number(process.env.PORT ?? 8080)
createReceiver({ keys, onEvent: (e) => console.log(`${e.type} ${e.id} #${e.sequence}`) }).listen(port, () =>
  console.log(`receiving on http://localhost:${port}/`)
)
