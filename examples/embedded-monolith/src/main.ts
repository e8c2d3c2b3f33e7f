/**
 * A plain TypeScript app (no Effect in its own code) that embeds Recur through its Promise
 * facade: it creates a plan, subscribes a customer, moves the sandbox clock three months and
 * prints the invoices.
 */
import { createBilling } from "@recur/embedded"

export async function main(log: (line: string) => void = console.log): Promise<Array<string>> {
  const billing = await createBilling({ storage: "memory", payments: "sandbox" })
  try {
    const { merchant_id } = await billing.merchants.create({
      name: "Acme SaaS",
      currency: "USD",
      frozen_time: Date.parse("2026-01-31T09:00:00Z")
    })
    const product = await billing.catalog.createProduct(merchant_id, { product_name: "Team plan" })
    const price = await billing.catalog.createPrice(merchant_id, {
      name: "Team monthly",
      product_id: product.product_id,
      currency: "USD",
      billing_type: "recurring",
      price_type: "flat_price",
      price_plan: { billing_cycle_unit: "month", base_price_val: "49.00" }
    })
    const session = await billing.checkout.createSession(merchant_id, {
      payer_id: "user-42",
      line_items: [{ price_id: price.price_id, quantity: "3" }]
    })
    const paid = await billing.checkout.pay(merchant_id, session.session_id, {
      number: "4242424242424242",
      exp_month: 12,
      exp_year: 2030,
      cvc: "123"
    })
    log(`checkout: ${paid.status}, trade ${paid.trade.trade_id} ${paid.trade.amount} ${paid.trade.currency}`)

    await billing.advanceClock(merchant_id, new Date("2026-04-30T10:00:00Z"))
    const invoices = await billing.invoices.list(merchant_id)
    const lines = invoices.list
      .slice()
      .reverse()
      .map(
        (i) =>
          `${i.invoice_type.padEnd(8)} cycle ${i.cycle_index}  ${i.amount} ${i.currency}  ${i.biz_status}  ${i.created_at.slice(0, 10)}`
      )
    for (const line of lines) log(line)
    return lines
  } finally {
    await billing.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
