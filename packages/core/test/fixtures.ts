import { DateTime } from "effect"
import { Price } from "../src/index.js"

/** A recurring monthly flat price; override any field. */
export const priceVersion = (overrides: Partial<ConstructorParameters<typeof Price.PriceVersion>[0]> = {}) =>
  new Price.PriceVersion({
    id: "pri_01jd0000000000000000000000",
    price_name: "Pro",
    price_alias: null,
    product_id: "prd_01jd0000000000000000000000",
    merchant_id: "mch_01jd0000000000000000000000",
    currency: "USD",
    billing_type: "recurring",
    price_val: null,
    description: null,
    biz_status: "active",
    created_at: DateTime.makeUnsafe(Date.UTC(2026, 10, 22, 10, 4, 5)),
    price_type: "flat_price",
    usage_amount: null,
    usage_unit: null,
    model_type: null,
    billing_threshold: null,
    trial_amount: null,
    price_version_id: "prv_01jd0000000000000000000000",
    product_version_id: null,
    payment_timing: "prepaid",
    billing_dimension: "quantity",
    quantity_tier_type: null,
    price_tier_type: null,
    usage_threshold: null,
    usage_unit_price: null,
    quantity_unit: null,
    merchant_price_id: null,
    has_trial: false,
    trial_type: null,
    metadata: {},
    trial_period: null,
    price_plan: new Price.PricePlan({
      price_plan_id: "pln_01jd0000000000000000000000",
      plan_name: "Monthly",
      billing_cycle_unit: "month",
      billing_cycle_count: 1,
      is_infinite: true,
      base_price_val: "30.00",
      plan_description: "",
      price_plan_tiers: []
    }),
    quantity_tiers: [],
    usage_tiers: [],
    features: [],
    ...overrides
  })
