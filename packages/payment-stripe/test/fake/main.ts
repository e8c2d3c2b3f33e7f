/**
 * The fake in a process of its own, for a test that blocks its own event loop while Stripe is
 * asked (a CLI run with `spawnSync`):
 *
 *   node --import tsx main.ts '[{"secret_key":"sk_test_…","publishable_key":"pk_test_…"}]'
 *
 * knows the accounts given (as `account()` makes them), prints `{"base":"http://127.0.0.1:…"}` on
 * its first line, and runs until it is killed.
 */
import { start } from "./StripeFake.js"

const accounts = JSON.parse(process.argv[2] ?? "[]") as ReadonlyArray<{
  readonly id?: string
  readonly secret_key?: string
  readonly publishable_key?: string
  readonly live?: boolean
}>
const fake = await start()
for (const account of accounts) fake.account(account)
console.log(JSON.stringify({ base: fake.base }))
process.on("SIGTERM", () => void fake.close().then(() => process.exit(0)))
