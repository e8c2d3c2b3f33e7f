/**
 * The customer portal's pages, in the customer's language (the session's `locale`, else the
 * browser's `Accept-Language`, else English): the customer's subscriptions (status, the next
 * invoice's date and amount, card on file, a form to replace it, cancel at period end and its
 * revocation, a choice of the prices the merchant allows switching to, the quantities it lets
 * change), the invoices to pay (each with a Pay link to its hosted page) and the invoice history
 * (with their page and PDF), and the previews of a price switch and of a quantity change. Plain HTML, no external assets, forms that
 * post relative to the page. Only what the merchant's portal settings allow is shown.
 */
import { Invoice, Money } from "@recur/core"
import type { Portal, PortalInvoices, PortalQuantities, Subscriptions } from "@recur/core"
import { type Language, esc, interval, money, stripeLocale } from "./checkoutPage.js"
import * as I18n from "./i18n/index.js"
import { date, statusText } from "./invoiceDocument.js"
import * as PaymentElement from "./paymentElement.js"

/** The portal's words in a language. */
export const portalWords = (language: Language): I18n.Messages["portal"] => I18n.messagesOf(language).portal

/** The portal page's style. */
export const portalStyle = `body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#111}
section.sub{border:1px solid #ddd;border-radius:.4rem;padding:1rem;margin:1rem 0}h2{margin:.2rem 0}.muted{color:#555}
table{width:100%;border-collapse:collapse}th,td{text-align:start;padding:.4rem;border-bottom:1px solid #ddd}.num{text-align:end}
label{display:block;margin:.5rem 0 .2rem}input,select{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}.row{display:flex;gap:.5rem}.row>div{flex:1}
button{margin-top:.8rem;padding:.6rem 1rem;font-size:1rem;background:#1a4fd6;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
button.secondary{background:#fff;color:#8a1111;border:1px solid #8a1111}button:focus,input:focus,select:focus,a:focus,summary:focus{outline:3px solid #f5a623}
.error{background:#fde8e8;color:#8a1111;padding:.6rem;border-radius:.3rem}.notice{background:#e8f5e9;padding:.6rem;border-radius:.3rem}a{color:#1a4fd6}
.total{font-size:1.4rem;font-weight:600}a.pay{display:inline-block;padding:.4rem .9rem;background:#1a4fd6;color:#fff;border-radius:.3rem;text-decoration:none}
section.to-pay{border:1px solid #e0a800;background:#fffaf0;border-radius:.4rem;padding:1rem;margin:1rem 0}section.balance{border:1px solid #ddd;border-radius:.4rem;padding:1rem;margin:1rem 0}`

const LIVE = ["trial", "active", "past_due", "unpaid", "paused"]

/** A message above a page: a refusal (`role=alert`) or a notice. */
const messageHtml = (message?: { readonly text: string; readonly error: boolean }) =>
  message
    ? `<p class="${message.error ? "error" : "notice"}" role="${message.error ? "alert" : "status"}">${esc(message.text)}</p>`
    : ""

/**
 * The invoices to pay: number, date, status (a retrying one says when the card is tried again),
 * amount, and a Pay link to the invoice's hosted page, which takes the payment (a failed invoice
 * of an unpaid subscription: the new card becomes the subscription's and recovers it). Nothing
 * when there is none.
 */
export const toPayHtml = (invoices: PortalInvoices.Account["to_pay"], language: Language): string => {
  if (invoices.length === 0) return ""
  const w = I18n.messagesOf(language).portal
  const [cNumber, cDate, cStatus, cAmount] = w.columns
  const rows = invoices.map((i) => {
    const number = i.number ?? i.invoice_id
    const retry = i.biz_status === "retrying" && i.dunning?.next_retry_at ? i.dunning.next_retry_at : null
    // a sent invoice says when it is due (its net terms); others are due when issued
    const when =
      i.due_date !== null
        ? `<span class="due-date">${esc(w.dueOn(date(language, i.due_date)))}</span>`
        : esc(date(language, i.created_at))
    return `<tr id="to-pay-${esc(i.invoice_id)}"><td>${esc(number)}</td><td>${when}</td><td>${esc(statusText(language, i.biz_status))}${retry !== null ? `<br><span class="muted next-attempt">${esc(w.nextAttempt(date(language, retry)))}</span>` : ""}</td><td class="num">${esc(money(language, Money.format(Invoice.amountRemaining(i)), i.currency))}</td><td>${i.hosted_invoice_url ? `<a class="pay" href="${esc(i.hosted_invoice_url)}" aria-label="${esc(w.payInvoice(number))}">${esc(I18n.messagesOf(language).invoice.pay)}</a>` : ""}</td></tr>`
  })
  return `<section class="to-pay" id="to-pay"><h2>${esc(w.toPay)}</h2>
<table id="open-invoices"><thead><tr><th>${esc(cNumber)}</th><th>${esc(cDate)}</th><th>${esc(cStatus)}</th><th class="num">${esc(cAmount)}</th><th></th></tr></thead><tbody>${rows.join("")}</tbody></table></section>`
}

/**
 * The customer's balance from its ledger, in a section of its own with what it means (credit
 * applied to the next invoices, or owed on the next one); nothing when it is zero.
 */
export const balanceHtml = (balance: PortalInvoices.Account["balance"], language: Language): string => {
  if (balance === null) return ""
  const w = I18n.messagesOf(language).portal
  const owed = balance.amount.startsWith("-")
  return `<section class="balance" id="balance"><h2>${esc(w.balance)}</h2><p class="total">${esc(money(language, balance.amount, balance.currency))}</p><p class="muted">${esc(owed ? w.balanceOwed : w.balanceCredit)}</p></section>`
}

/**
 * The customer's active prepaid credits (credit grants): what remains of each and when it
 * expires, in the order invoices use them; nothing when there are none.
 */
export const creditsHtml = (credits: PortalInvoices.Account["credits"], language: Language): string => {
  if (credits.length === 0) return ""
  const w = I18n.messagesOf(language).portal
  const rows = credits.map(
    (c) =>
      `<li><span class="total">${esc(money(language, c.remaining, c.currency))}</span> <span class="muted">${esc(c.expires_at === null ? w.creditNoExpiry : w.creditExpires(date(language, c.expires_at)))}</span></li>`
  )
  return `<section class="balance" id="credits"><h2>${esc(w.credits)}</h2><ul>${rows.join("")}</ul></section>`
}

/** The portal's overview; forms post to `<base>subscription/<id>/<action>`. */
export const portalHtml = (
  view: Portal.PortalView,
  base: string,
  language: Language,
  message?: { readonly text: string; readonly error: boolean }
): string => {
  const w = I18n.messagesOf(language).portal
  const c = I18n.messagesOf(language).card
  const allowed = view.settings
  const focusCard = view.session.flow === "payment_method_update" && allowed.payment_method_update
  const subs = view.subscriptions.map(
    (
      { payment_method: pm, price_name, items, subscription: s, upcoming, usage, switch_options, quantity_options },
      n
    ) => {
      const action = (what: string) => esc(`${base}subscription/${s.id}/${what}`)
      const card = pm ? w.card(pm.brand, pm.last4, pm.exp_month, pm.exp_year) : w.checkoutCard
      const live = LIVE.includes(s.status)
      const cardForm =
        live && allowed.payment_method_update
          ? `<details${focusCard || s.status === "past_due" || s.status === "unpaid" ? " open" : ""}><summary>${esc(w.updateCard)}</summary>
<form method="post" action="${action("payment_method")}" class="card-form" id="card-form-${n}">
${
  view.payments.provider === "stripe"
    ? PaymentElement.fields(view.payments, {
        form: `card-form-${n}`,
        suffix: `-${n}`,
        amountMinor: 0,
        currency: view.currency,
        locale: stripeLocale(language)
      })
    : `<label for="card_number_${n}">${esc(c.cardNumber)}</label><input id="card_number_${n}" name="card_number" inputmode="numeric" autocomplete="cc-number" required${focusCard && n === 0 ? " autofocus" : ""}>
<div class="row"><div><label for="exp_month_${n}">${esc(c.month)}</label><input id="exp_month_${n}" name="exp_month" inputmode="numeric" required placeholder="12"></div>
<div><label for="exp_year_${n}">${esc(c.year)}</label><input id="exp_year_${n}" name="exp_year" inputmode="numeric" required placeholder="2030"></div>
<div><label for="cvc_${n}">${esc(c.cvc)}</label><input id="cvc_${n}" name="cvc" inputmode="numeric" required></div></div>`
}
<button type="submit">${esc(w.saveCard)}</button></form></details>`
          : ""
      const switchForm =
        switch_options.length > 0
          ? `<details><summary>${esc(w.changePlan)}</summary>
<form method="get" action="${action("switch")}" class="switch-form"><label for="price_${n}">${esc(w.newPlan)}</label>
<select id="price_${n}" name="price_id">${switch_options
              .map((o) => {
                const amount = o.amount !== null ? ` — ${money(language, o.amount, o.currency)}` : ""
                const every = o.interval ? ` ${interval(language, o.interval.unit, o.interval.count)}` : ""
                return `<option value="${esc(o.price_id)}">${esc(`${o.name}${amount}${o.amount !== null ? every : ""}`)}</option>`
              })
              .join("")}</select>
<button type="submit">${esc(w.review)}</button></form></details>`
          : ""
      // the items whose quantity the merchant lets the customer change, from the next cycle
      const quantityForms =
        quantity_options.length > 0
          ? `<details><summary>${esc(w.changeQuantity)}</summary>
${quantity_options
  .map(
    (
      o,
      k
    ) => `<form method="get" action="${action("quantity")}" class="quantity-form"><input type="hidden" name="item_id" value="${esc(o.item_id)}">
<label for="quantity_${n}_${k}">${esc(w.quantityOf(o.name))}</label><input id="quantity_${n}_${k}" name="quantity" type="number" inputmode="numeric" min="${o.min}" max="${o.max}" value="${esc(o.pending_quantity ?? o.quantity)}" required>
${o.pending_quantity !== null ? `<p class="muted pending">${esc(w.pendingQuantity(o.pending_quantity, date(language, s.next_invoice_date)))}</p>` : ""}<button type="submit">${esc(w.review)}</button></form>`
  )
  .join("\n")}</details>`
          : ""
      const cancel =
        live && s.status !== "unpaid" && allowed.cancel
          ? s.cancel_at_period_end
            ? `<p class="muted">${esc(w.endsOn(date(language, s.current_period_end)))}</p><form method="post" action="${action("revoke")}"><button type="submit">${esc(w.keep)}</button></form>`
            : `<form method="post" action="${action("cancel")}"><button type="submit" class="secondary">${esc(w.cancel)}</button></form>`
          : ""
      const next =
        upcoming !== null
          ? ` · <span class="upcoming">${esc(w.nextInvoice(date(language, upcoming.invoice_date), money(language, upcoming.amount, upcoming.currency)))}</span>`
          : ""
      // a subscription of several items lists each with its quantity (a metered one: billed by usage)
      const itemList =
        items.length > 1
          ? `<ul class="items" id="items-${n}">${items
              .map(
                (i) =>
                  `<li>${esc(i.name)}${
                    i.metered
                      ? ` <span class="muted">${esc(I18n.messagesOf(language).checkout.byUsage)}</span>`
                      : i.quantity !== "1"
                        ? ` × ${esc(i.quantity)}`
                        : ""
                  }</li>`
              )
              .join("")}</ul>\n`
          : ""
      // the metric items' usage so far in the period (what the next invoice bills of them)
      const [uItem, uValue, uAmount] = w.usageColumns
      const usageTable =
        usage !== null && usage.items.length > 0
          ? `<div class="usage" id="usage-${n}"><h3>${esc(w.usage)}</h3><table><thead><tr><th>${esc(uItem)}</th><th class="num">${esc(uValue)}</th><th class="num">${esc(uAmount)}</th></tr></thead><tbody>${usage.items
              .map(
                (u) =>
                  `<tr><td>${esc(u.name)} <span class="muted">${esc(u.metric)}</span></td><td class="num">${esc(u.value)}</td><td class="num">${esc(money(language, u.amount, usage.currency))}</td></tr>`
              )
              .join(
                ""
              )}</tbody><tfoot><tr><td></td><td></td><td class="num">${esc(money(language, usage.amount, usage.currency))}</td></tr></tfoot></table></div>\n`
          : ""
      return `<section class="sub" id="sub-${esc(s.id)}"><h2>${esc(price_name)}</h2>
${itemList}<p><span class="status">${esc((w.statuses as Readonly<Record<string, string>>)[s.status] ?? s.status)}</span>${next}</p>
${usageTable}
<p class="muted">${esc(w.paidWith(card))}</p>
${cardForm}
${switchForm}
${quantityForms}
${cancel}</section>`
    }
  )
  const [cNumber, cDate, cStatus, cAmount] = w.columns
  const invoices = view.invoices.map(
    (i) =>
      `<tr><td>${esc(i.number ?? i.invoice_id)}</td><td>${esc(date(language, i.created_at))}</td><td>${esc(i.invoice_type === "refund" && i.biz_status !== "void" ? I18n.messagesOf(language).invoice.creditNote : statusText(language, i.biz_status))}</td><td class="num">${esc(money(language, i.amount, i.currency))}</td><td>${i.hosted_invoice_url ? `<a href="${esc(i.hosted_invoice_url)}">${esc(w.view)}</a> · <a href="${esc(i.invoice_pdf ?? "")}">PDF</a>` : ""}</td></tr>`
  )
  const back = view.session.return_url
  const invoiceSection = allowed.invoice_history
    ? `<h2>${esc(w.invoices)}</h2>
${invoices.length > 0 ? `<table id="invoices"><thead><tr><th>${esc(cNumber)}</th><th>${esc(cDate)}</th><th>${esc(cStatus)}</th><th class="num">${esc(cAmount)}</th><th></th></tr></thead><tbody>${invoices.join("")}</tbody></table>` : `<p>${esc(w.noInvoices)}</p>`}`
    : ""
  return `${view.payments.provider === "stripe" ? PaymentElement.stripeScript(view.payments) : ""}<main><p class="muted">${esc(view.merchantName)}</p>
<h1>${esc(w.title)}</h1>
<p id="customer">${esc([view.customer.name, view.customer.email].filter((x) => x !== null && x !== "").join(" · "))}</p>
${messageHtml(message)}
${toPayHtml(view.account.to_pay, language)}
${balanceHtml(view.account.balance, language)}
${creditsHtml(view.account.credits, language)}
<h2>${esc(w.subscriptions)}</h2>
${subs.length > 0 ? subs.join("\n") : `<p>${esc(w.noSubscriptions)}</p>`}
${invoiceSection}
${back ? `<p><a href="${esc(back)}" id="return">${esc(w.backTo(view.merchantName))}</a></p>` : ""}
</main>`
}

/**
 * The preview of a price switch: the engine's quote (credit for the unused time, charge for the
 * rest of the period — or, to another interval, for the new period and when it starts — tax,
 * what is charged or given back now) and the form that commits exactly it (`quote_id`). Posted to `switch` relative to the page; the back link is `back`.
 */
export const switchHtml = (
  input: {
    readonly merchantName: string
    readonly from: string
    readonly option: Portal.SwitchOption
    readonly quote: Subscriptions.Quote
    readonly back: string
  },
  language: Language,
  message?: { readonly text: string; readonly error: boolean }
): string => {
  const w = I18n.messagesOf(language).portal
  const q = input.quote
  const m = (amount: string) => money(language, amount, q.currency)
  const prorated = q.outcome === "upgrade" || q.outcome === "refund" || q.outcome === "credit_balance"
  // another interval: the unused time credited, the new period charged now (from `billed_at`)
  const switched = q.outcome === "interval_switch"
  const starts = switched ? I18n.date(language, q.billed_at ?? q.effective_at) : ""
  const total = q.total.startsWith("-") ? q.total.slice(1) : q.total
  const rows =
    prorated || switched
      ? [
          [w.unusedTime(input.from), q.lines[0]?.amount ?? `-${q.credit}`],
          [
            switched ? w.newPeriod(input.option.name, starts) : w.remainingTime(input.option.name),
            q.lines[1]?.amount ?? q.charge
          ],
          ...(/[1-9]/.test(q.tax) ? [[w.tax, q.tax]] : [])
        ]
          .map(([label, amount]) => `<tr><td>${esc(label!)}</td><td class="num">${esc(m(amount!))}</td></tr>`)
          .join("")
      : ""
  const outcome =
    q.outcome === "upgrade" || (switched && /[1-9]/.test(q.total) && !q.total.startsWith("-"))
      ? `<p>${esc(w.dueNow)}: <span class="total" id="due-now">${esc(m(total))}</span></p>`
      : q.outcome === "refund" || (switched && q.total.startsWith("-"))
        ? `<p>${esc(w.refunded)}: <span class="total" id="due-now">${esc(m(total))}</span></p>`
        : q.outcome === "credit_balance"
          ? `<p>${esc(w.credited)}: <span class="total" id="due-now">${esc(m(total))}</span></p>`
          : switched
            ? `<p id="due-now">${esc(w.creditPaysPeriod)}</p>`
            : `<p id="due-now">${esc(w.nothingNow)}</p>`
  return `<main><p class="muted">${esc(input.merchantName)}</p>
<h1>${esc(w.switchTitle(input.from, input.option.name))}</h1>
${messageHtml(message)}
${rows ? `<table id="quote"><tbody>${rows}</tbody></table>` : ""}
${q.discounts_ending.map((d) => `<p class="discount-ends">${esc(w.discountEnds(d.discount_code !== "" ? d.discount_code : d.discount_id))}</p>`).join("")}
${outcome}
${switched ? `<p id="new-period">${esc(w.newPeriodStarts(starts))}</p>` : ""}
<form method="post" action="switch"><input type="hidden" name="price_id" value="${esc(input.option.price_id)}"><input type="hidden" name="quote_id" value="${esc(q.quote_id)}">
<button type="submit" id="confirm">${esc(w.confirm)}</button></form>
<p><a href="${esc(input.back)}">${esc(w.back)}</a></p>
</main>`
}

/**
 * The preview of a quantity change: the item, its quantity now and asked, the next invoice as it
 * is and with the change, when the change applies (nothing is charged now), and the form that
 * makes it. Posted to `quantity` relative to the page; the back link is `back`.
 */
export const quantityHtml = (
  input: {
    readonly merchantName: string
    readonly preview: PortalQuantities.QuantityPreview
    readonly back: string
  },
  language: Language,
  message?: { readonly text: string; readonly error: boolean }
): string => {
  const w = I18n.messagesOf(language).portal
  const p = input.preview
  const row = (label: string, id: string, i: typeof p.before) =>
    i === null
      ? ""
      : `<tr><td>${esc(label)}</td><td class="num" id="${id}">${esc(money(language, i.amount, i.currency))}</td></tr>`
  const rows = `${row(w.nextInvoiceNow, "before", p.before)}${row(w.nextInvoiceAfter, "after", p.after)}`
  return `<main><p class="muted">${esc(input.merchantName)}</p>
<h1>${esc(w.quantityTitle(p.option.name, p.option.quantity, p.quantity))}</h1>
${messageHtml(message)}
${rows ? `<table id="quantity-quote"><tbody>${rows}</tbody></table>` : ""}
<p id="applies">${esc(w.quantityApplies(date(language, p.effective_at)))}</p>
<form method="post" action="quantity"><input type="hidden" name="item_id" value="${esc(p.option.item_id)}"><input type="hidden" name="quantity" value="${esc(p.quantity)}">
<button type="submit" id="confirm">${esc(w.confirm)}</button></form>
<p><a href="${esc(input.back)}">${esc(w.back)}</a></p>
</main>`
}
