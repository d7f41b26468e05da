import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { PLAN_FEATURES } from '../../src/plan-features.ts';

/** "A, B and C (beta on D)" from plan rows, as PLAN_FEATURES words it. */
function listOf(names: string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

t.test('the plans each feature message names are the plans accounts.plans gives the feature', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const plans = await db.sql<{ display_name: string; csv: boolean; webhooks: string }[]>`
    SELECT display_name, csv, webhooks FROM accounts.plans ORDER BY monthly_credits`;
  t.equal(PLAN_FEATURES.csv.plans, listOf(plans.filter((p) => p.csv).map((p) => p.display_name)));
  const beta = plans.filter((p) => p.webhooks === 'beta').map((p) => p.display_name);
  t.equal(
    PLAN_FEATURES.webhooks.plans,
    `${listOf(plans.filter((p) => p.webhooks === 'yes').map((p) => p.display_name))} (beta on ${listOf(beta)})`,
  );
});
