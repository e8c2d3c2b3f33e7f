/**
 * The handlers of the invoice items group.
 *
 * @since 0.1.0
 */
import { Invoice, InvoiceItems, OneOffInvoices } from "@recur/core"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BillingApi } from "../Api.js"
import { call, invalid, ok, pageQuery } from "./Shared.js"

/**
 * The handlers of the invoice items group.
 *
 * @since 0.1.0
 */
export const invoiceItemsLive = HttpApiBuilder.group(BillingApi, "invoiceItems", (handlers) =>
  Effect.gen(function* () {
    const items = yield* InvoiceItems.InvoiceItems
    const oneOff = yield* OneOffInvoices.OneOffInvoices
    return handlers
      .handle("create", ({ payload }) =>
        call((m) => Effect.map(items.create(m, payload), (invoice_item) => ok({ invoice_item })))
      )
      .handle("list", ({ query: q }) =>
        call((m) =>
          Effect.gen(function* () {
            const page = yield* pageQuery(q)
            if (q.pending !== undefined && q.pending !== "true" && q.pending !== "false")
              return yield* invalid("pending", "must be true or false")
            return ok(
              yield* items.list(m, {
                customer_id: q.customer_id,
                pending: q.pending === undefined ? undefined : q.pending === "true",
                created: page.created,
                limit: page.limit,
                starting_after: page.starting_after,
                ending_before: page.ending_before
              })
            )
          })
        )
      )
      .handle("get", ({ params: path }) =>
        call((m) => Effect.map(items.get(m, path.invoice_item_id), (invoice_item) => ok({ invoice_item })))
      )
      .handle("delete", ({ params: path }) =>
        call((m) => Effect.map(items.remove(m, path.invoice_item_id), (invoice_item) => ok({ invoice_item })))
      )
      .handle("createInvoice", ({ payload }) =>
        call((m) => Effect.map(oneOff.create(m, payload), (invoice) => ok({ invoice: Invoice.viewOf(invoice) })))
      )
  })
)
