export const TIERS = ['free', 'starter', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

// Requests per UTC day; null means no daily cap.
export const DAILY_QUOTA: Record<Tier, number | null> = {
  free: 100,
  starter: 5000,
  pro: null,
  enterprise: null,
};

export const SEES_FLAGGED: Record<Tier, boolean> = {
  free: false,
  starter: false,
  pro: true,
  enterprise: true,
};
