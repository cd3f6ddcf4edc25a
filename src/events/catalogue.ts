/**
 * The event catalogue: every type of event daybook emits, its severity, and the shape of its
 * `data`, as zod schemas (the JSON Schema files in schemas/events/ are made from them). Pure.
 *
 * Company events come from history: one per field-level change (`enterprise_changes`), named
 * after the change's category and detail, and one per non-field observation (`initial`,
 * `disappeared`, `reappeared`, `stale_ignored`, `resolution_changed`, `resolution_mismatch`).
 * Operational events say what happened to a cycle, an entry or an endpoint.
 */
import { z } from 'zod';
import type { EnterpriseChangeCategory, Severity } from '../terms/changes.ts';
import { EVENT_TYPE_LABELS } from '../terms/fields.ts';

export { eventTypeLabel } from '../terms/fields.ts';

export const SEVERITIES = ['high', 'medium', 'low'] as const;

/** What a field-level change event carries in `data`. */
export const ChangeData = z.object({
  category: z.string().describe('the change category (see docs/changes.md)'),
  field: z
    .string()
    .describe('the upstream field, or the child list (PERSONS, BE_INVEST, CLEARINGINFO.member)'),
  kind: z.enum(['added', 'removed', 'modified']),
  previous: z.string().nullable().describe('the value before, as analytics.enterprise_changes.before'),
  current: z.string().nullable().describe('the value after, as analytics.enterprise_changes.after'),
  detail: z
    .string()
    .nullable()
    .describe('a refinement of the change (increase, decrease, to_bad, opened, …)'),
  from_version: z.number().int().nullable().describe('the version the change starts from'),
  to_version: z.number().int().describe('the version the change made'),
});
export type ChangeData = z.infer<typeof ChangeData>;

/** What a related company's event carries in `data`: who, through whom, and what changed. */
export const RelatedData = z.object({
  related: z
    .object({
      pid: z.string(),
      name: z.string().nullable(),
      uscc: z.string().nullable().describe('its unified social credit code, when its record gives one'),
    })
    .describe("the related company that changed: a shareholder of the event's company, or one of theirs"),
  hops: z.number().int().min(1).max(3).describe('1: a direct shareholder; 2: a shareholder of one; 3'),
  path: z
    .array(z.object({ pid: z.string(), name: z.string().nullable() }))
    .describe("the chain of holdings from the event's company to the related one, both included"),
  change: ChangeData.omit({ from_version: true, to_version: true }).describe(
    "the related company's change, as its own company.* event carries it",
  ),
});
export type RelatedData = z.infer<typeof RelatedData>;

/** What a non-field company event carries in `data`. */
export const ObservationData = z.object({
  kind: z.string().describe('the kind in analytics.enterprise_events'),
  keyword: z.string().nullable().describe('the watch keyword whose answer showed it'),
  detail: z.string().nullable(),
});
export type ObservationData = z.infer<typeof ObservationData>;

export const CycleData = z.object({
  cycle: z.string(),
  counts: z.record(z.string(), z.number().int()).describe('entries by status in cycle_fetches'),
  credits: z.number().int().nullable(),
  reason: z.string().nullable(),
});

export const EntryFailedData = z.object({
  watch_id: z.number().int(),
  keyword: z.string(),
  reason: z.string(),
  message: z.string().nullable(),
});

export const EndpointData = z.object({
  subscription_id: z.number().int(),
  url: z.string().describe('the endpoint URL without credentials or query'),
  reason: z.string().nullable(),
});

export const DigestData = z.object({
  cycle: z.string(),
  markdown: z.string(),
  companies: z.array(
    z.object({
      pid: z.string(),
      name: z.string().nullable(),
      changes: z.array(z.record(z.string(), z.unknown())),
    }),
  ),
});

interface TypeSpec {
  /** What the event means, for the catalogue. */
  description: string;
  data: z.ZodType;
  /** The severity, when the type fixes it (a change's severity comes from its classification). */
  severity?: Severity;
  group: 'company' | 'operations' | 'digest';
}

const change = (description: string): TypeSpec => ({ description, data: ChangeData, group: 'company' });
const related = (description: string): TypeSpec => ({ description, data: RelatedData, group: 'company' });
const observed = (description: string, severity: Severity): TypeSpec => ({
  description,
  data: ObservationData,
  severity,
  group: 'company',
});

/** Every event type, by name. */
export const EVENT_TYPES = {
  'company.status.changed': change('the registration status (ENTSTATUS) changed'),
  'company.liquidation.opened': change('a liquidation group appeared (CLEARINGINFO empty → non-empty)'),
  'company.liquidation.closed': change('the liquidation group disappeared'),
  'company.liquidation.members.changed': change(
    'a member of the liquidation group was added, removed or changed',
  ),
  'company.revoked': change('a revocation date appeared (REVOKEDATE)'),
  'company.revocation.changed': change('the revocation date or reason changed otherwise'),
  'company.name.changed': change('the name or a former name changed'),
  'company.legal_representative.changed': change('the legal representative changed'),
  'company.capital.decreased': change('registered capital decreased (same currency)'),
  'company.capital.increased': change('registered capital increased (same currency)'),
  'company.capital.changed': change('registered capital or its currency changed otherwise'),
  'company.shareholders.changed': change('a shareholder was added, removed or changed'),
  'company.key_personnel.changed': change('a key person was added, removed or changed'),
  'company.address.changed': change('the address changed'),
  'company.business_scope.changed': change('the business scope changed'),
  'company.type.changed': change('the enterprise type changed'),
  'company.operating_period.changed': change('the operating period changed'),
  'company.listing.changed': change('the listed flag changed'),
  'company.industry.changed': change('the industry classification changed'),
  'company.insured_employees.changed': change('the number of insured employees changed'),
  'company.registration.changed': change('a registration fact changed (number, code, authority, dates)'),
  'company.other.changed': change('another documented field changed'),
  'company.extra.changed': change('an undocumented field changed'),
  'related.status.changed': related(
    'a shareholder of the company (or one of theirs, within the watched depth) became 注销, 吊销, 清算, 停业 or 撤销',
  ),
  'related.revoked': related(
    'a shareholder of the company (or one of theirs) had its business licence revoked',
  ),
  'related.liquidation.opened': related(
    'a shareholder of the company (or one of theirs) entered liquidation',
  ),
  'related.liquidation.closed': related('a shareholder of the company (or one of theirs) left liquidation'),
  'related.legal_representative.changed': related(
    'a shareholder of the company (or one of theirs) changed its legal representative',
  ),
  'related.capital.decreased': related(
    'a shareholder of the company (or one of theirs) decreased its registered capital',
  ),
  'company.first_seen': observed('the first version of a company was recorded', 'low'),
  'company.disappeared': observed('a keyword that found the company answers not_found', 'high'),
  'company.reappeared': observed('a company that had disappeared is found again', 'medium'),
  'company.stale_answer.ignored': observed(
    'an answer older than the current version was kept out of history',
    'low',
  ),
  'company.resolution.changed': observed('a watch keyword now resolves to another company', 'medium'),
  'company.resolution.mismatch': observed(
    "an answer's credit code differs from the entry's expected one: not merged into history",
    'high',
  ),
  'cycle.completed': {
    description: 'every planned entry of a cycle reached a final state',
    data: CycleData,
    severity: 'low',
    group: 'operations',
  },
  'cycle.paused': {
    description: 'enterprise work of a cycle was paused (credits, a long Retry-After, the upstream refusing)',
    data: CycleData,
    severity: 'high',
    group: 'operations',
  },
  'upstream.refusing': {
    description: 'the upstream refused 30 calls in a row: the cycle is paused',
    data: CycleData,
    severity: 'high',
    group: 'operations',
  },
  'entry.failed': {
    description: 'a watch entry failed for good in a cycle',
    data: EntryFailedData,
    severity: 'medium',
    group: 'operations',
  },
  'endpoint.disabled': {
    description: 'a webhook endpoint was disabled (410 Gone, or 5 days of failures)',
    data: EndpointData,
    severity: 'high',
    group: 'operations',
  },
  'endpoint.recovered': {
    description: 'a disabled or failing webhook endpoint answers again',
    data: EndpointData,
    severity: 'low',
    group: 'operations',
  },
  'digest.daily': {
    description: "a cycle's changes, grouped by company and severity, as Markdown and as a list",
    data: DigestData,
    severity: 'low',
    group: 'digest',
  },
} as const satisfies Record<string, TypeSpec>;

export type EventType = keyof typeof EVENT_TYPES;

// Every type has its words in the field catalogue: a type added here without them does not compile.
const LABELLED: Record<EventType, { zh: string; en: string }> = EVENT_TYPE_LABELS;
void LABELLED;

/** Whether events of `type` are about operations (a cycle, an entry, an endpoint), not a company. */
export function isOperatorEvent(type: string): boolean {
  return (EVENT_TYPES as Record<string, TypeSpec>)[type]?.group === 'operations';
}

/** The type of the event a field-level change makes. */
export function changeEventType(
  category: EnterpriseChangeCategory,
  field: string,
  detail: string | null,
): EventType {
  switch (category) {
    case 'status':
      return 'company.status.changed';
    case 'liquidation':
      if (field === 'CLEARINGINFO' && detail === 'opened') return 'company.liquidation.opened';
      if (field === 'CLEARINGINFO' && detail === 'closed') return 'company.liquidation.closed';
      return 'company.liquidation.members.changed';
    case 'revocation':
      return detail === 'revoked' ? 'company.revoked' : 'company.revocation.changed';
    case 'name':
      return 'company.name.changed';
    case 'legal_representative':
      return 'company.legal_representative.changed';
    case 'registered_capital':
      if (detail === 'decrease') return 'company.capital.decreased';
      if (detail === 'increase') return 'company.capital.increased';
      return 'company.capital.changed';
    case 'shareholders':
      return 'company.shareholders.changed';
    case 'key_personnel':
      return 'company.key_personnel.changed';
    case 'address':
      return 'company.address.changed';
    case 'business_scope':
      return 'company.business_scope.changed';
    case 'enterprise_type':
      return 'company.type.changed';
    case 'operating_period':
      return 'company.operating_period.changed';
    case 'listing':
      return 'company.listing.changed';
    case 'industry':
      return 'company.industry.changed';
    case 'insured_employees':
      return 'company.insured_employees.changed';
    case 'registration':
      return 'company.registration.changed';
    case 'other':
      return 'company.other.changed';
    case 'extra':
      return 'company.extra.changed';
    default: {
      const never: never = category;
      throw new Error(`no event type for change category ${String(never)}`);
    }
  }
}

/**
 * The event a change of a related company makes on the companies it concerns, from its own
 * event's type and detail; null for a change that does not reach them.
 */
export function relatedEventType(type: EventType, detail: string | null): EventType | null {
  switch (type) {
    case 'company.status.changed':
      return detail === 'to_bad' ? 'related.status.changed' : null;
    case 'company.revoked':
      return 'related.revoked';
    case 'company.liquidation.opened':
      return 'related.liquidation.opened';
    case 'company.liquidation.closed':
      return 'related.liquidation.closed';
    case 'company.legal_representative.changed':
      return 'related.legal_representative.changed';
    case 'company.capital.decreased':
      return 'related.capital.decreased';
    default:
      return null;
  }
}

/**
 * The severity of a related company's event, by how close it is: a direct shareholder
 * deregistered, revoked or in trouble is high; each hop further is one step lower.
 */
export function relatedSeverity(type: EventType, hops: number): Severity {
  const direct: Partial<Record<EventType, Severity>> = {
    'related.status.changed': 'high',
    'related.revoked': 'high',
    'related.liquidation.opened': 'high',
    'related.capital.decreased': 'medium',
    'related.legal_representative.changed': 'medium',
    'related.liquidation.closed': 'low',
  };
  const order: Severity[] = ['high', 'medium', 'low'];
  const at = order.indexOf(direct[type] ?? 'low') + Math.max(0, hops - 1);
  return order[Math.min(order.length - 1, at)] as Severity;
}

/** The type of the event a non-field observation makes; null for a kind that makes none. */
export function observationEventType(kind: string): EventType | null {
  switch (kind) {
    case 'initial':
      return 'company.first_seen';
    case 'disappeared':
      return 'company.disappeared';
    case 'reappeared':
      return 'company.reappeared';
    case 'stale_ignored':
      return 'company.stale_answer.ignored';
    case 'resolution_changed':
      return 'company.resolution.changed';
    case 'resolution_mismatch':
      return 'company.resolution.mismatch';
    default:
      return null;
  }
}

/** The severity an event of `type` gets, given the change's own severity when it has one. */
export function severityOfEvent(type: EventType, changeSeverity?: Severity): Severity {
  const fixed = (EVENT_TYPES[type] as TypeSpec).severity;
  return fixed ?? changeSeverity ?? 'low';
}

/** The envelope every event shares: the row of `events`, as the feed and webhooks send it. */
export function envelopeSchema(type: EventType): z.ZodType {
  const spec = EVENT_TYPES[type] as TypeSpec;
  const company = spec.group === 'company';
  return z
    .object({
      id: z.string().describe('the event id (evt_…), also the webhook-id header: deduplicate on it'),
      type: z.literal(type),
      sequence: z.number().int().describe('global, increasing in commit order, with gaps'),
      company_sequence: company
        ? z.number().int().describe("increasing per company: 1 for a company's first event")
        : z.null(),
      severity: z.enum(SEVERITIES),
      pid: company ? z.string() : z.string().nullable(),
      name: z.string().nullable().describe('the company name when the event was written'),
      cycle: z.string().nullable().describe('the cycle (YYYY-MM-DD, Beijing date of the refresh)'),
      detected_at: z.string().describe('when daybook found it (ISO 8601)'),
      effective_date: z
        .string()
        .nullable()
        .describe("the registry's approval date of the version (APPRDATE, YYYY-MM-DD) when known"),
      raw_response_id: z.number().int().nullable().describe('the raw answer behind it (raw_responses.id)'),
      data: spec.data,
    })
    .describe(spec.description);
}

/** The JSON Schema of each event type, as written to schemas/events/<type>.json. */
export function eventJsonSchemas(): Record<EventType, unknown> {
  const out = {} as Record<EventType, unknown>;
  for (const type of Object.keys(EVENT_TYPES) as EventType[]) {
    out[type] = {
      title: type,
      ...(z.toJSONSchema(envelopeSchema(type), { target: 'draft-2020-12' }) as object),
    };
  }
  return out;
}
