/**
 * Row types from the drizzle schema, as the `postgres` driver returns them. No drizzle instance
 * runs the queries (connect.ts), so drizzle's `$inferSelect` is not what a query yields: its keys
 * are the schema's camelCase property names and its values follow each column's drizzle mode.
 * The driver names each value by its SQL column (snake_case here) and parses by the Postgres
 * type: timestamps and dates become a Date, int8 and numeric stay strings. `DriverRow` maps a
 * table to that shape; `Recast` states what a query's cast (`::text`, `::int`) or a CHECK-bound
 * text column makes of a column; `NonNull` and `LeftJoined` what a query makes of null (a
 * `coalesce` or an `is not null`; the optional side of a left join). Shapes a query computes (an
 * aggregate, an expression, a catalog read) are named interfaces beside their query.
 *
 * A column's SQL name is its literal name where drizzle kept one, else (names passed through
 * schema.ts's `tstz` and `id` are typed `string`) the snake_case of its property name;
 * test/db/rows.test.ts checks that every column of another name has a literal one. Array
 * columns keep drizzle's element type (text[] here).
 */
import type { Column, Table } from 'drizzle-orm';

/** `lastRefreshedAt` → `last_refreshed_at`. */
export type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;

/** The driver's parse of a column of this drizzle column type (`Inferred`: drizzle's, with its null). */
type DriverValue<C extends Column, Inferred> = C['_']['columnType'] extends
  | 'PgTimestamp'
  | 'PgTimestampString'
  | 'PgDate'
  | 'PgDateString'
  ? Nullable<Inferred, Date>
  : C['_']['columnType'] extends
        | 'PgBigInt53'
        | 'PgBigInt64'
        | 'PgBigSerial53'
        | 'PgBigSerial64'
        | 'PgNumeric'
        | 'PgNumericNumber'
        | 'PgNumericBigInt'
    ? Nullable<Inferred, string>
    : Inferred;

/**
 * The SQL name of a column: its literal name where drizzle kept it, else (a name given through
 * schema.ts's `tstz`/`id`, typed `string`) the snake_case of its property.
 */
type ColumnName<C, K extends string> = C extends Column
  ? string extends C['_']['name']
    ? SnakeCase<K>
    : C['_']['name']
  : SnakeCase<K>;

type Nullable<Inferred, V> = null extends Inferred ? V | null : V;

/** A row of `T` as `select *` through the driver returns it: snake_case keys, the driver's types. */
export type DriverRow<T extends Table> = {
  [K in keyof T['_']['columns'] & keyof T['$inferSelect'] & string as ColumnName<
    T['_']['columns'][K],
    K
  >]: T['_']['columns'][K] extends Column ? DriverValue<T['_']['columns'][K], T['$inferSelect'][K]> : never;
};

/**
 * `R` with the columns `K` read as `V`: null stays possible where it was, except on a column
 * drizzle types `unknown` (json), which says nothing of null, so there `V` is the whole value.
 */
export type Recast<R, K extends keyof R, V> = {
  [P in keyof R]: P extends K ? (unknown extends R[P] ? V : Nullable<R[P], V>) : R[P];
};

/**
 * `R` with the columns `K` never null: what a query makes sure of (`coalesce`, a `where … is not
 * null`, a value it has just written) and the column's type does not say.
 */
export type NonNull<R, K extends keyof R> = {
  [P in keyof R]: P extends K ? NonNullable<R[P]> : R[P];
};

/** `R` read from the optional side of a left join: every column may be null. */
export type LeftJoined<R> = { [P in keyof R]: R[P] | null };
