/**
 * The hosted pages' languages: the words of each (one file per language, typed `Messages`), the
 * choice of a payer's language (the session's `locale`, else the browser's `Accept-Language` by
 * preference, else English) and the formatting of amounts and dates through `Intl` for it.
 */
import { messages as arSA } from "./ar-SA.js"
import { messages as deDE } from "./de-DE.js"
import { messages as enUS } from "./en-US.js"
import { messages as esES } from "./es-ES.js"
import { messages as frFR } from "./fr-FR.js"
import { messages as idID } from "./id-ID.js"
import { messages as itIT } from "./it-IT.js"
import { messages as jaJP } from "./ja-JP.js"
import { messages as koKR } from "./ko-KR.js"
import { messages as nlNL } from "./nl-NL.js"
import { messages as plPL } from "./pl-PL.js"
import { messages as ptPT } from "./pt-PT.js"
import { messages as ruRU } from "./ru-RU.js"
import { messages as thTH } from "./th-TH.js"
import type { Language, Messages } from "./types.js"
import { LANGUAGES } from "./types.js"
import { messages as zhCN } from "./zh-CN.js"
import { messages as zhTW } from "./zh-TW.js"

export { LANGUAGES, type Language, type Messages, type Unit } from "./types.js"

const all: Readonly<Record<Language, Messages>> = {
  "ar-SA": arSA,
  "de-DE": deDE,
  "en-US": enUS,
  "es-ES": esES,
  "fr-FR": frFR,
  "id-ID": idID,
  "it-IT": itIT,
  "ja-JP": jaJP,
  "ko-KR": koKR,
  "nl-NL": nlNL,
  "pl-PL": plPL,
  "pt-PT": ptPT,
  "ru-RU": ruRU,
  "th-TH": thTH,
  "zh-CN": zhCN,
  "zh-TW": zhTW
}

/** Everything the pages say in `language`. */
export const messagesOf = (language: Language): Messages => all[language]

/** The default language: English. */
export const DEFAULT_LANGUAGE: Language = "en-US"

const exact = new Map<string, Language>(LANGUAGES.map((l) => [l.toLowerCase(), l]))

/** Chinese written in traditional characters: Taiwan, Hong Kong, Macao, or `Hant`. */
const traditional = /^zh-(?:hant|tw|hk|mo)(?:-|$)/

/**
 * The language spoken here for one language tag: the exact tag (case-insensitive, `_` read as
 * `-`), else by its primary subtag (`de-CH` → German, `pt-BR` → Portuguese, `en-GB` → English;
 * Chinese by script: `zh-Hant`, `zh-HK`, `zh-MO` → `zh-TW`, other `zh` → `zh-CN`).
 */
export const match = (tag: string): Language | undefined => {
  const t = tag.trim().toLowerCase().replace(/_/g, "-")
  if (t === "" || t === "*") return undefined
  const found = exact.get(t)
  if (found) return found
  const primary = t.split("-")[0]!
  if (primary === "zh") return traditional.test(t) ? "zh-TW" : "zh-CN"
  return LANGUAGES.find((l) => l.split("-")[0]!.toLowerCase() === primary)
}

/**
 * The languages of an `Accept-Language` header by preference: highest `q` first (ties in the
 * order written), `q=0` and malformed weights left out. At most 32 entries are read.
 */
export const preferences = (header: string | undefined): ReadonlyArray<string> =>
  (header ?? "")
    .split(",")
    .slice(0, 32)
    .map((part, index) => {
      const [tag = "", ...params] = part.split(";")
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)).find((m) => m !== null)
      const weight = params.length === 0 ? 1 : q ? Number(q[1]) : Number.NaN
      return { tag: tag.trim(), weight, index }
    })
    .filter((p) => p.tag !== "" && p.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((p) => p.tag)

/**
 * The page's language: the session's `locale` (one of the sixteen) when set, else the first of
 * the browser's preferred languages spoken here (exactly, else by primary subtag), else English.
 */
export const languageOf = (locale: string | null, acceptLanguage: string | undefined): Language => {
  const fromLocale = locale !== null ? match(locale) : undefined
  if (fromLocale) return fromLocale
  for (const tag of preferences(acceptLanguage)) {
    const found = match(tag)
    if (found) return found
  }
  return DEFAULT_LANGUAGE
}

/** `dir` for a language's `<html>`: `rtl` for Arabic. */
export const dirOf = (language: Language): "ltr" | "rtl" => all[language].dir

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/

/**
 * An exact decimal amount in the reader's format (`30.00 USD` → `$30.00`, `30,00 €`, `٣٠٫٠٠ US$`):
 * `Intl.NumberFormat` formats the decimal string itself (exactly, at any length — never through a
 * float), with as many fraction digits as written. Not a decimal, or an unknown currency: as given.
 */
export const money = (language: Language, amount: string, currency: string): string => {
  const match = DECIMAL.exec(amount)
  if (match === null) return `${amount} ${currency}`
  const digits = (match[3] ?? "").length
  try {
    return new Intl.NumberFormat(language, {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits
    }).format(amount as unknown as number)
  } catch {
    return `${amount} ${currency}`
  }
}

/**
 * A percentage written as a decimal string (`19.5` for 19.5 %) in the reader's format
 * (`19.5%`, `19,5 %`): the point moved two places in the string, then `Intl`'s percent style.
 */
export const percent = (language: Language, percentage: string): string => {
  const match = DECIMAL.exec(percentage)
  if (match === null) return `${percentage} %`
  const [, sign = "", integer = "0", fraction = ""] = match
  const padded = integer.padStart(3, "0")
  const shifted = `${sign}${padded.slice(0, -2)}.${padded.slice(-2)}${fraction}`
  return new Intl.NumberFormat(language, {
    style: "percent",
    minimumFractionDigits: fraction.length,
    maximumFractionDigits: fraction.length
  }).format(shifted as unknown as number)
}

/**
 * A date in the reader's language, in UTC (the instants the engine stores), on the Gregorian
 * calendar whatever the locale's default (Arabic (Saudi Arabia) defaults to the Hijri calendar,
 * Thai to the Buddhist era): invoice periods read the same as the API's.
 */
export const date = (language: Language, epochMillis: number): string =>
  new Intl.DateTimeFormat(language, { dateStyle: "medium", timeZone: "UTC", calendar: "gregory" }).format(
    new Date(epochMillis)
  )
