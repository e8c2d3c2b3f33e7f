/**
 * The engine's settings: where session pages live, how long sessions and incomplete
 * subscriptions last, when the trial notice goes out, when an unknown outcome is reconciled.
 * The dunning policy is {@link Dunning.DefaultPolicy}.
 *
 * @since 0.1.0
 */
import { Context, Layer } from "effect"
import { defaultPortalSettings, type PortalSettings } from "../portal/PortalSession.js"

const DAY = 86_400_000

/**
 * Engine settings (defaults in {@link defaultSettings}).
 *
 * @since 0.1.0
 */
export class Settings extends Context.Service<
  Settings,
  {
    /** Public base URL of the REST adapter: session pages live at `<publicUrl>/checkout/<id>`. */
    readonly publicUrl: string
    readonly sessionTtlMs: number
    readonly incompleteExpiryMs: number
    readonly trialNoticeMs: number
    /** How long an attempt may stay unanswered before the gateway is asked about it. */
    readonly reconcileAfterMs: number
    /**
     * Whether live merchants' webhook endpoints may point at private or special-purpose
     * addresses (an operator's own network). Sandbox merchants always may. Default false.
     */
    readonly webhookPrivateNetwork: boolean
    /**
     * The most work items (renewals, retries, notices, deliveries …) one advance of a sandbox
     * clock runs; past it the clock stops where it got
     * to, answers `complete: false`, and the next call continues. Default 2,000.
     */
    readonly advanceClockMaxItems: number
    /**
     * The portal settings of merchants that have set none of their own (a server's
     * `RECUR_PORTAL_SETTINGS`); price ids of another merchant in `switch_prices` are ignored.
     */
    readonly portal: PortalSettings
    /** Where pages load Stripe.js from for merchants on Stripe (`https://js.stripe.com/v3/`). */
    readonly stripeJsUrl: string
  }
>()("@recur/core/Settings") {}

/**
 * The defaults: sessions live 24 h, incomplete subscriptions 23 h, the trial notice 3 days
 * before the end, unknown outcomes are reconciled after a minute.
 *
 * @since 0.1.0
 */
export const defaultSettings: Settings["Service"] = {
  publicUrl: "http://localhost:4000",
  sessionTtlMs: DAY,
  incompleteExpiryMs: 23 * 3_600_000,
  trialNoticeMs: 3 * DAY,
  reconcileAfterMs: 60_000,
  webhookPrivateNetwork: false,
  advanceClockMaxItems: 2000,
  portal: defaultPortalSettings,
  stripeJsUrl: "https://js.stripe.com/v3/"
}

/**
 * Settings as a layer.
 *
 * @since 0.1.0
 */
export const layer = (overrides: Partial<Settings["Service"]> = {}) =>
  Layer.succeed(Settings, { ...defaultSettings, ...overrides })
