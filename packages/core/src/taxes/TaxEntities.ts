/**
 * Tax rates as stored (re-exported by `Entities`).
 */
import * as Store from "../kernel/Store.js"
import * as Tax from "./Tax.js"
import { ms } from "../kernel/internal/entities.js"

/**
 * A tax rate, stored as the API shows it. `jurisdiction` (`DE`, `US-CA`) is set while the rate is
 * active and unique per merchant: one active rate per country and region.
 *
 * @since 0.1.0
 */
export const taxRate: Store.Entity<Tax.TaxRate, typeof Tax.TaxRate.Encoded> = Store.entity({
  name: "tax_rate",
  table: "recur_tax_rates",
  schema: Tax.TaxRate,
  id: "tax_rate_id",
  createdAt: (t) => ms(t.created_at),
  columns: {
    status: "status",
    country: "country",
    jurisdiction: (t) => (t.status === "active" ? Tax.jurisdiction(t) : null)
  },
  unique: [{ name: "tax_rate_jurisdiction", columns: ["jurisdiction"] }]
})
