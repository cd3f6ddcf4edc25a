/**
 * The words of a change that every layer shares: its kind, its severity and its category. They
 * sit at the bottom so that the outbox, the planner and the classifier all use the same ones.
 */

export type ChangeKind = 'added' | 'removed' | 'modified';

/** What a change says, whoever writes or shows it: the field, how it changed, its values, why, how much it matters. */
type ChangeFacts<T> = Pick<
  T,
  Extract<keyof T, 'field' | 'kind' | 'before' | 'after' | 'detail' | 'severity'>
>;

/** The facts of a change row (see ChangeFacts), picked from anything that carries them. */
export function changeFacts<
  T extends {
    field: unknown;
    kind: unknown;
    before: unknown;
    after: unknown;
    detail: unknown;
    severity: unknown;
  },
>(c: T): ChangeFacts<T> {
  return {
    field: c.field,
    kind: c.kind,
    before: c.before,
    after: c.after,
    detail: c.detail,
    severity: c.severity,
  } as ChangeFacts<T>;
}

const BAD_STATUS = /吊销|注销|清算|停业|撤销|cancel|revok|liquidat|suspend/i;

/** True when a status text names a bad state (cancelled, revoked, liquidating, suspended). */
export function isBadStatus(status: string | null): boolean {
  return status !== null && BAD_STATUS.test(status);
}
export type Severity = 'high' | 'medium' | 'low';

export const ENTERPRISE_CHANGE_CATEGORIES = [
  'name',
  'legal_representative',
  'registered_capital',
  'status',
  'address',
  'business_scope',
  'enterprise_type',
  'operating_period',
  'revocation',
  'listing',
  'industry',
  'key_personnel',
  'shareholders',
  'liquidation',
  'insured_employees',
  'registration',
  'other',
  'extra',
] as const;
export type EnterpriseChangeCategory = (typeof ENTERPRISE_CHANGE_CATEGORIES)[number];

export const PRODUCT_CHANGE_CATEGORIES = [
  'identity',
  'name',
  'tagline',
  'description',
  'url',
  'timing',
  'topics',
  'media',
  'links',
  'thumbnail',
  'extra',
] as const;
export type ProductChangeCategory = (typeof PRODUCT_CHANGE_CATEGORIES)[number];
