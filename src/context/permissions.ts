/**
 * Roles and the permissions each one holds. Routes declare the permission they need; the
 * matrix below is the only place that says who has it.
 */
export const PERMISSIONS = [
  'READ_PUBLIC_CONTENT',
  'READ_PREVIEW_CONTENT',
  'READ_FULL_CONTENT',
  'READ_PREMIUM_CONTENT',
  'UNLIMITED_SEARCH',
  'BYPASS_RATE_LIMITS',
  'TRACK_PROGRESS',
  'CREATE_JOURNEY',
  'MANAGE_CONTENT',
  'MANAGE_USERS',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** JWT custom claims: `user_role` and `subscription_plan`. */
export const USER_ROLES = ['learner', 'admin'] as const;
export const SUBSCRIPTION_PLANS = ['free', 'premium'] as const;
export type UserRoleClaim = (typeof USER_ROLES)[number];
export type SubscriptionPlan = (typeof SUBSCRIPTION_PLANS)[number];

export const ROLES = ['ANONYMOUS', 'FREE_USER', 'PREMIUM_USER', 'ADMIN', 'SERVICE'] as const;
export type Role = (typeof ROLES)[number];

const LEARNER: Permission[] = ['READ_PUBLIC_CONTENT', 'READ_PREVIEW_CONTENT', 'TRACK_PROGRESS', 'CREATE_JOURNEY'];

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  ANONYMOUS: new Set(['READ_PUBLIC_CONTENT']),
  FREE_USER: new Set(LEARNER),
  PREMIUM_USER: new Set([...LEARNER, 'READ_FULL_CONTENT', 'READ_PREMIUM_CONTENT', 'UNLIMITED_SEARCH']),
  ADMIN: new Set(PERMISSIONS),
  // Exactly the spec's grant: read everything, search freely, never write, never /me.
  SERVICE: new Set([
    'READ_PUBLIC_CONTENT',
    'READ_PREVIEW_CONTENT',
    'READ_FULL_CONTENT',
    'READ_PREMIUM_CONTENT',
    'UNLIMITED_SEARCH',
    'BYPASS_RATE_LIMITS',
  ]),
};

/** The role a user's claims resolve to: admins first, then the subscription plan. */
export function roleFromClaims(userRole: UserRoleClaim, plan: SubscriptionPlan): Role {
  if (userRole === 'admin') return 'ADMIN';
  return plan === 'premium' ? 'PREMIUM_USER' : 'FREE_USER';
}

export const hasPermission = (role: Role, permission: Permission) => ROLE_PERMISSIONS[role].has(permission);
