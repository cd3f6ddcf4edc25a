/**
 * Permanent outcomes of a watch entry, shared by the planner (which rests such an entry) and the
 * purchase (which sets its next due time when it fails that way).
 */

/**
 * An entry whose last answer was a permanent error (not_found, invalid_parameter) is not asked
 * again for this many days: asking costs nothing when not found, but it spends rate; after a
 * week it is retried, since a company may reappear in the registry.
 */
export const PERMANENT_ERROR_QUIET_DAYS = 7;
export const PERMANENT_OUTCOMES: ReadonlySet<string> = new Set(['not_found', 'invalid_parameter']);
