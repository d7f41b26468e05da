// The Stripe catalogue: one Product and monthly Price per paid plan, one Product and one-time Price per credit pack,
// found by lookup key (plan:<plan>, pack:<pack>) or made, idempotently. Enterprise stays a contract.
import type postgres from 'postgres';
import type Stripe from 'stripe';
import { lookupKey } from './stripe.ts';

export interface CatalogueItem {
  lookup_key: string;
  kind: 'plan' | 'pack';
  item: string;
  name: string;
  unit_amount: number;
}

export interface SyncedItem extends CatalogueItem {
  product_id: string;
  price_id: string;
  outcome: 'found' | 'created';
}

/** What should be on sale, from our own tables (accounts.plans, accounts.pack_types). */
export async function wantedCatalogue(sql: postgres.Sql): Promise<CatalogueItem[]> {
  const rows = await sql<{ kind: 'plan' | 'pack'; item: string; name: string; unit_amount: number }[]>`
    SELECT 'plan' AS kind, plan AS item, display_name AS name, price_cents AS unit_amount
      FROM accounts.plans WHERE price_cents > 0
    UNION ALL
    SELECT 'pack', pack, display_name || ' credit pack', price_cents FROM accounts.pack_types
     ORDER BY 1 DESC, 4`;
  return rows.map((r) => ({ ...r, lookup_key: lookupKey(r.kind, r.item) }));
}

/**
 * Finds each item's active price by lookup key; makes the product and price when none is active (idempotency keys
 * name the item and amount, so a repeated or interrupted run makes nothing twice). A found price of another amount is
 * replaced: the new price takes over the lookup key (transfer_lookup_key), the old one stays for its subscribers.
 * Records each in billing.catalogue (owner connection).
 */
export async function syncCatalogue(sql: postgres.Sql, stripe: Stripe): Promise<SyncedItem[]> {
  const wanted = await wantedCatalogue(sql);
  const found = await stripe.prices.list({ lookup_keys: wanted.map((w) => w.lookup_key), active: true, limit: 100 });
  const out: SyncedItem[] = [];
  for (const w of wanted) {
    let price = found.data.find((p) => p.lookup_key === w.lookup_key && p.unit_amount === w.unit_amount);
    let outcome: SyncedItem['outcome'] = 'found';
    if (!price) {
      const old = found.data.find((p) => p.lookup_key === w.lookup_key);
      const productId =
        typeof old?.product === 'string'
          ? old.product
          : (
              await stripe.products.create(
                { name: w.name, metadata: { [w.kind]: w.item } },
                { idempotencyKey: `product:${w.lookup_key}` },
              )
            ).id;
      price = await stripe.prices.create(
        {
          product: productId,
          currency: 'usd',
          unit_amount: w.unit_amount,
          lookup_key: w.lookup_key,
          transfer_lookup_key: old !== undefined,
          metadata: { [w.kind]: w.item },
          ...(w.kind === 'plan' ? { recurring: { interval: 'month' as const } } : {}),
        },
        { idempotencyKey: `price:${w.lookup_key}:${w.unit_amount}` },
      );
      outcome = 'created';
    }
    const productId = typeof price.product === 'string' ? price.product : price.product.id;
    await sql`
      INSERT INTO billing.catalogue (lookup_key, product_id, price_id, unit_amount)
      VALUES (${w.lookup_key}, ${productId}, ${price.id}, ${w.unit_amount})
      ON CONFLICT (lookup_key) DO UPDATE
        SET product_id = excluded.product_id, price_id = excluded.price_id, unit_amount = excluded.unit_amount,
            synced_at = now()`;
    out.push({ ...w, product_id: productId, price_id: price.id, outcome });
  }
  return out;
}
