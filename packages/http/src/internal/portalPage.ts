/**
 * The customer portal's page: the customer's subscriptions (status, next invoice, card on file,
 * a form to replace it, cancel at period end and its revocation) and invoices (with their page
 * and PDF). Plain HTML, no external assets, forms that post relative to the page.
 */
import type { Portal } from "@recur/core"
import { DateTime } from "effect"
import { esc, money } from "./checkoutPage.js"
import { statusText } from "./invoiceDocument.js"

const date = (t: DateTime.Utc | null): string =>
  t === null
    ? "—"
    : new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeZone: "UTC" }).format(
        new Date(DateTime.toEpochMillis(t))
      )

const STATUS: Readonly<Record<string, string>> = {
  init: "Starting",
  trial: "Trial",
  active: "Active",
  canceled: "Canceled",
  incomplete: "Incomplete",
  paused: "Paused",
  past_due: "Past due — payment failed",
  unpaid: "Unpaid — update your card to continue"
}

/** The portal page's style. */
export const portalStyle = `body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}
section.sub{border:1px solid #ddd;border-radius:.4rem;padding:1rem;margin:1rem 0}h2{margin:.2rem 0}.muted{color:#555}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #ddd}.num{text-align:right}
label{display:block;margin:.5rem 0 .2rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}.row{display:flex;gap:.5rem}.row>div{flex:1}
button{margin-top:.8rem;padding:.6rem 1rem;font-size:1rem;background:#1a4fd6;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
button.secondary{background:#fff;color:#8a1111;border:1px solid #8a1111}button:focus,input:focus,a:focus,summary:focus{outline:3px solid #f5a623}
.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:.3rem}.notice{background:#e8f5e9;padding:.6rem;border-radius:.3rem}a{color:#1a4fd6}`

const LIVE = ["trial", "active", "past_due", "unpaid", "paused"]

/** The page's body; forms post to `<base>subscription/<id>/<action>`. */
export const portalHtml = (
  view: Portal.PortalView,
  base: string,
  message?: { readonly text: string; readonly error: boolean }
): string => {
  const focusCard = view.session.flow === "payment_method_update"
  const subs = view.subscriptions.map(({ payment_method: pm, price_name, subscription: s }, n) => {
    const action = (what: string) => esc(`${base}subscription/${s.id}/${what}`)
    const card = pm
      ? `${pm.brand} •••• ${pm.last4}, expires ${pm.exp_month}/${pm.exp_year}`
      : "the card used at checkout"
    const live = LIVE.includes(s.status)
    const cardForm = live
      ? `<details${focusCard || s.status === "past_due" || s.status === "unpaid" ? " open" : ""}><summary>Update payment method</summary>
<form method="post" action="${action("payment_method")}" class="card-form">
<label for="card_number_${n}">Card number</label><input id="card_number_${n}" name="card_number" inputmode="numeric" autocomplete="cc-number" required${focusCard && n === 0 ? " autofocus" : ""}>
<div class="row"><div><label for="exp_month_${n}">Month</label><input id="exp_month_${n}" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year_${n}">Year</label><input id="exp_year_${n}" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc_${n}">CVC</label><input id="cvc_${n}" name="cvc" inputmode="numeric" required></div></div>
<button type="submit">Save card</button></form></details>`
      : ""
    const cancel =
      live && s.status !== "unpaid"
        ? s.cancel_at_period_end
          ? `<p class="muted">Ends on ${esc(date(s.current_period_end))}.</p><form method="post" action="${action("revoke")}"><button type="submit">Keep my subscription</button></form>`
          : `<form method="post" action="${action("cancel")}"><button type="submit" class="secondary">Cancel at the end of the period</button></form>`
        : ""
    return `<section class="sub" id="sub-${esc(s.id)}"><h2>${esc(price_name)}</h2>
<p><span class="status">${esc(STATUS[s.status] ?? s.status)}</span>${(s.status === "active" || s.status === "trial") && s.next_invoice_date !== null && !s.cancel_at_period_end ? ` · next invoice on ${esc(date(s.next_invoice_date))}` : ""}</p>
<p class="muted">Paid with ${esc(card)}</p>
${cardForm}
${cancel}</section>`
  })
  const invoices = view.invoices.map(
    (i) =>
      `<tr><td>${esc(i.number ?? i.invoice_id)}</td><td>${esc(date(i.created_at))}</td><td>${esc(statusText("en", i.biz_status))}</td><td class="num">${esc(money("en", i.amount, i.currency))}</td><td>${i.hosted_invoice_url ? `<a href="${esc(i.hosted_invoice_url)}">View</a> · <a href="${esc(i.invoice_pdf ?? "")}">PDF</a>` : ""}</td></tr>`
  )
  const back = view.session.return_url
  return `<main><p class="muted">${esc(view.merchantName)}</p>
<h1>Your billing</h1>
<p id="customer">${esc([view.customer.name, view.customer.email].filter((x) => x !== null && x !== "").join(" · "))}</p>
${message ? `<p class="${message.error ? "error" : "notice"}" role="${message.error ? "alert" : "status"}">${esc(message.text)}</p>` : ""}
<h2>Subscriptions</h2>
${subs.length > 0 ? subs.join("\n") : "<p>No subscriptions.</p>"}
<h2>Invoices</h2>
${invoices.length > 0 ? `<table id="invoices"><thead><tr><th>Number</th><th>Date</th><th>Status</th><th class="num">Amount</th><th></th></tr></thead><tbody>${invoices.join("")}</tbody></table>` : "<p>No invoices.</p>"}
${back ? `<p><a href="${esc(back)}" id="return">Back to ${esc(view.merchantName)}</a></p>` : ""}
</main>`
}
