-- analytics.format_drift: the format drift daybook has seen in upstream answers, one row per
-- operation, field, kind (unknown_field, missing_field, type_variant) and shape seen.
CREATE VIEW analytics.format_drift AS
SELECT
  d.operation,
  d.field,
  d.kind,
  d.seen,
  d.expected,
  d.responses,
  d.records,
  d.first_seen_at,
  d.last_seen_at,
  d.example
FROM format_drift d;
