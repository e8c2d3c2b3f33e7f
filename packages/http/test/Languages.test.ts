// The hosted pages' sixteen languages: every language has every word (the type makes a missing
// key an error; this checks the values too), the payer's language is chosen as the seed says,
// and amounts, percentages and dates go through Intl exactly.
import { describe, expect, it } from "@effect/vitest"
import { CheckoutSession } from "@recur/core"
import * as I18n from "../src/internal/i18n/index.js"
import * as InvoiceDocument from "../src/internal/invoiceDocument.js"

/** The keys of an object, nested ones as `a.b`, functions as leaves. */
const keysOf = (value: object, prefix = ""): Array<string> =>
  Object.entries(value).flatMap(([k, v]) =>
    typeof v === "object" && v !== null && !Array.isArray(v) ? keysOf(v, `${prefix}${k}.`) : [`${prefix}${k}`]
  )

/** Every string a language's messages say, functions called with sample arguments. */
const stringsOf = (value: unknown): Array<string> => {
  if (typeof value === "string") return [value]
  if (typeof value === "function") return [String(value("X", "Y", 3, 2030))]
  if (Array.isArray(value)) return value.flatMap(stringsOf)
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsOf)
  return []
}

const UNITS = ["day", "week", "month", "quarter", "year"] as const

describe("hosted page languages", () => {
  it("the sixteen checkout locales of the seed, each with every key and no empty word", { timeout: 10_000 }, () => {
    expect(I18n.LANGUAGES).toHaveLength(16)
    // exactly the locales a session (and a portal session) accepts
    expect([...CheckoutSession.Locale.literals].sort()).toEqual([...I18n.LANGUAGES].sort())
    const english = keysOf(I18n.messagesOf("en-US")).sort()
    expect(english.length).toBeGreaterThan(100)
    for (const language of I18n.LANGUAGES) {
      const m = I18n.messagesOf(language)
      expect([language, keysOf(m).sort()]).toEqual([language, english])
      const { every: _every, duration: _duration, ...words } = m
      for (const s of stringsOf(words)) expect([language, s.trim().length > 0]).toEqual([language, true])
      for (const unit of UNITS)
        for (const n of [1, 2, 3, 5, 11, 12, 21]) {
          expect(m.every(unit, n).length).toBeGreaterThan(0)
          expect(m.duration(unit, n).length).toBeGreaterThan(0)
        }
      expect(I18n.dirOf(language)).toBe(language === "ar-SA" ? "rtl" : "ltr")
    }
  })

  it("words are translated, not copied: no language but English says English's checkout words", () => {
    const english = I18n.messagesOf("en-US").checkout
    for (const language of I18n.LANGUAGES.filter((l) => l !== "en-US")) {
      const w = I18n.messagesOf(language).checkout
      expect([language, w.dueToday === english.dueToday, w.pay === english.pay]).toEqual([language, false, false])
    }
  })

  it("plural forms where the language has them", () => {
    expect(I18n.messagesOf("ru-RU").every("month", 3)).toBe("раз в 3 месяца")
    expect(I18n.messagesOf("ru-RU").duration("day", 14)).toBe("14 дней")
    expect(I18n.messagesOf("pl-PL").every("month", 6)).toBe("co 6 miesięcy")
    expect(I18n.messagesOf("pl-PL").duration("day", 2)).toBe("2 dni")
    expect(I18n.messagesOf("ar-SA").every("month", 2)).toBe("كل شهرين")
    expect(I18n.messagesOf("ja-JP").every("month", 3)).toBe("3か月ごと")
    expect(I18n.messagesOf("en-US").duration("day", 1)).toBe("1 day")
    expect(I18n.messagesOf("de-DE").every("year", 1)).toBe("pro Jahr")
  })

  it("the session's locale wins; else Accept-Language by q, exactly or by primary subtag; else English", () => {
    expect(I18n.languageOf("th-TH", "de-DE")).toBe("th-TH")
    expect(I18n.languageOf(null, "de-DE")).toBe("de-DE")
    expect(I18n.languageOf(null, "fr-CH, de;q=0.8")).toBe("fr-FR")
    expect(I18n.languageOf(null, "de;q=0.5, it;q=0.9")).toBe("it-IT")
    expect(I18n.languageOf(null, "sv;q=1, nl;q=0.1")).toBe("nl-NL")
    expect(I18n.languageOf(null, "ja;q=0, ko")).toBe("ko-KR")
    expect(I18n.languageOf(null, "pt-BR")).toBe("pt-PT")
    expect(I18n.languageOf(null, "zh-Hant-HK")).toBe("zh-TW")
    expect(I18n.languageOf(null, "zh-HK")).toBe("zh-TW")
    expect(I18n.languageOf(null, "zh")).toBe("zh-CN")
    expect(I18n.languageOf(null, "zh_TW")).toBe("zh-TW")
    expect(I18n.languageOf(null, "AR")).toBe("ar-SA")
    expect(I18n.languageOf(null, "*, es;q=0.3")).toBe("es-ES")
    expect(I18n.languageOf(null, "de;q=abc, id")).toBe("id-ID")
    expect(I18n.languageOf(null, "sv, fi")).toBe("en-US")
    expect(I18n.languageOf(null, undefined)).toBe("en-US")
    expect(I18n.languageOf(null, `${"x,".repeat(5000)}de`)).toBe("en-US")
  })

  it("amounts are formatted from their decimal strings, exactly at any length", () => {
    expect(I18n.money("en-US", "12345678901234567.89", "USD")).toBe("$12,345,678,901,234,567.89")
    expect(I18n.money("de-DE", "1234.50", "EUR")).toBe("1.234,50\u00a0€")
    expect(I18n.money("de-DE", "-0.10", "EUR")).toBe("-0,10\u00a0€")
    expect(I18n.money("ja-JP", "1234", "JPY")).toBe("￥1,234")
    expect(I18n.money("ar-SA", "30.05", "SAR")).toContain("٣٠٫٠٥")
    expect(I18n.money("en-US", "0.123", "KWD")).toBe("KWD\u00a00.123")
    expect(I18n.money("en-US", "1e5", "USD")).toBe("1e5 USD")
    expect(I18n.money("en-US", "1.00", "NOPE1")).toBe("1.00 NOPE1")
    expect(I18n.percent("en-US", "19.5")).toBe("19.5%")
    expect(I18n.percent("de-DE", "7.00")).toBe("7,00\u00a0%")
    expect(I18n.percent("fr-FR", "0.5")).toBe("0,5\u00a0%")
  })

  it("dates in UTC on the Gregorian calendar in every language", () => {
    const jan1 = Date.UTC(2026, 0, 1, 23, 30)
    expect(I18n.date("en-US", jan1)).toBe("Jan 1, 2026")
    expect(I18n.date("de-DE", jan1)).toBe("01.01.2026")
    expect(I18n.date("th-TH", jan1)).toContain("2026")
    expect(I18n.date("ar-SA", jan1)).toContain("٢٠٢٦")
    for (const language of I18n.LANGUAGES) expect(I18n.date(language, jan1)).not.toContain("1447")
  })

  it("the PDF is written in a language only when Helvetica can write all its invoice words", () => {
    const winAnsi = /^[\u0020-\u007e\u00a0-\u00ff€\u2013\u2014•]*$/
    for (const language of I18n.LANGUAGES) {
      const writable = stringsOf(I18n.messagesOf(language).invoice).every((s) => winAnsi.test(s))
      expect([language, InvoiceDocument.PDF_LANGUAGES.has(language)]).toEqual([language, writable])
      expect(InvoiceDocument.pdfLanguage(language)).toBe(writable ? language : "en-US")
    }
    expect(winAnsi.test(InvoiceDocument.PDF_ENGLISH_NOTE)).toBe(true)
  })
})
