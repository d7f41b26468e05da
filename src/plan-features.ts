// Plan features beyond the REST and MCP surfaces (accounts.plans: csv, webhooks). A request for a feature its plan
// lacks is refused with 403 feature_not_in_plan; like every non-2xx answer it is not charged. Credit packs never
// unlock a feature: only the plan decides.
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';

export type PlanFeature = 'csv' | 'webhooks' | 'saved_searches';

/** What each feature is called in messages, and the plans that include it (the rows of accounts.plans). */
export const PLAN_FEATURES: Record<PlanFeature, { name: string; plans: string }> = {
  csv: { name: 'CSV output', plans: 'Pro, Growth, Lead Feed and Enterprise' },
  webhooks: { name: 'Webhooks', plans: 'Growth, Lead Feed and Enterprise (beta on Pro)' },
  saved_searches: { name: 'Saved searches', plans: 'Growth, Lead Feed and Enterprise (beta on Pro)' },
};

/** Whether the authenticated request's plan includes the feature (webhooks and saved searches, which go with them: 'beta' counts). */
export function planIncludes(request: FastifyRequest, feature: PlanFeature): boolean {
  const auth = request.auth;
  if (!auth) return false;
  return feature === 'csv' ? auth.csv : auth.webhooks !== 'no';
}

/**
 * Throws the 403 feature_not_in_plan when the request's plan lacks the feature. The plan is read again before a
 * refusal: the cached one may be a moment older than an upgrade.
 */
export async function requirePlanFeature(request: FastifyRequest, feature: PlanFeature): Promise<void> {
  if (planIncludes(request, feature)) return;
  await request.server.refreshAuth(request);
  if (planIncludes(request, feature)) return;
  const { name, plans } = PLAN_FEATURES[feature];
  throw new ApiError(
    403,
    'feature_not_in_plan',
    `${name} is not included in your plan; it is included in ${plans}. Ask us to change your plan (credit packs do not add features).`,
  );
}
