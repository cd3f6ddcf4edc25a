/**
 * Response schemas for the two upstream operations, as daybook reads them. They follow
 * docs/upstream.md but are tolerant readers: unknown fields are kept (loose objects),
 * optional fields may be absent or null, and the documented type variants are accepted
 * (REGCAP as number or string, OPTO as date or text). The undocumented-type fields are `unknown`.
 * Only these parsers can build the parsed types.
 */
import { z } from 'zod';
import { ExactNumber, storable } from './json.ts';

/** A number a double cannot hold exactly, as parseJsonExact reads it (its digits as sent). */
export const exact = z.instanceof(ExactNumber);
/**
 * A documented text field. Read leniently: a number or a boolean in its place is read as its text
 * (REGNO as digits, say), and any other shape as null, so one odd value never refuses a paid
 * record; format drift reports the variant either way.
 */
const text = z.union([z.string(), z.number(), exact, z.boolean()]).nullish().catch(null);
const scalar = z.union([z.string(), z.number(), exact, z.boolean()]).nullish().catch(null);
/** An identifier documented as a string that could plausibly arrive as a number. */
const idString = z.union([z.string().min(1), z.number(), exact]).transform((v) => String(v));

// Children are read leniently: one odd child (a null name) must not reject the whole record.
export const Person = z.looseObject({
  NAME: text,
  POSITION: text,
});

export const Shareholder = z.looseObject({
  // A PID of another shape (an object, say) is unreadable, not a reason to lose the holder.
  PID: z
    .union([z.string(), z.number(), exact])
    .transform((v) => String(v))
    .nullish()
    .catch(null),
  INV: text,
  INVTYPE: text,
});

export const ClearingMember = z.looseObject({ liqMem: text, ligpriSign: scalar });

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A list of children, read as sent: a lone object is a list of one (an empty object, none), and
 * a child that is not an object (a bare name, say) is read as its name under `nameKey`, so that
 * no child the answer holds is lost before normalization decides what it holds.
 */
function childList<T extends z.ZodType>(child: T, nameKey: string) {
  const one = z.preprocess(
    (c) => (isObject(c) || c === null || c === undefined ? c : { [nameKey]: c }),
    child.catch({} as z.infer<T>),
  );
  return z
    .preprocess((v) => (isObject(v) ? (Object.keys(v).length === 0 ? [] : [v]) : v), z.array(one).nullish())
    .catch(null);
}

/** metadata.content of an enterprise-search success. */
export const EnterpriseRecord = z.looseObject({
  PID: idString,
  ENTNAME: z.string().min(1),
  HISTORYNAME: text,
  IS_LISTED: scalar,
  LEGALPERSON: text,
  LEGALPERSONDESC: text,
  ESDATE: text,
  SCONFORM: z.unknown().optional(),
  REGNO: text,
  UNCID: text,
  ENTTYPECODE: z.unknown().optional(),
  ENTTYPE: text,
  REGCAP: z.union([z.number(), exact, z.string()]).nullish().catch(null),
  REGCAPCUR: text,
  PROVINCE: z.union([z.number(), exact, z.string()]).nullish().catch(null),
  OPFROM: text,
  OPTO: text,
  REGORG: text,
  APPRDATE: text,
  REVOKEDATE: text,
  REVOKEREASON: z.unknown().optional(),
  ENTSTATUS: text,
  OPLOC: text,
  OPSCOPE: text,
  PERSONS: childList(Person, 'NAME'),
  BE_INVEST: childList(Shareholder, 'INV'),
  participants: z.unknown().optional(),
  INDUSTRYPHY: text,
  INDUSTRYBIG: text,
  industry_middle: z.unknown().optional(),
  CLEARINGINFO: childList(ClearingMember, 'liqMem'),
});
export type EnterpriseRecord = z.infer<typeof EnterpriseRecord>;

/**
 * The documented billing block. Read for the ledger by src/purchase/billing.ts, whatever its shape:
 * a billed answer with an undocumented `usage` (credits as a string, say) is still a success.
 */
export const Usage = z.looseObject({
  credits: z.number(),
  remark: text,
});

export const EnterpriseSuccess = z.looseObject({
  status: z.literal('success'),
  markdown: text,
  metadata: z.looseObject({
    usage: z.union([Usage, z.unknown()]).optional(),
    content: EnterpriseRecord,
  }),
});
export type EnterpriseSuccess = z.infer<typeof EnterpriseSuccess>;

// A product's children are read leniently too: a child without its url is dropped by the
// normalizer, and one odd child never refuses the day's list.
export const Media = z.looseObject({ url: text, type: text, videoUrl: text });

export const ProductLink = z.looseObject({ url: text, type: text });

export const Comment = z.looseObject({ body: text, created_at: text });

/** A count: a whole number the integer column holds (32 bits), else null (drift reports it). */
const count = z
  .union([z.number(), exact.transform(() => Number.NaN), z.string().regex(/^\d+$/).transform(Number)])
  .transform((n) => (Number.isSafeInteger(n) && Math.abs(n) <= 2_147_483_647 ? n : null));

export const Product = z.looseObject({
  id: z.string().min(1),
  product_id: idString,
  name: z.string().min(1),
  tagline: text,
  description: text,
  url: text,
  votes_count: count.nullish().catch(null),
  comments_count: count.nullish().catch(null),
  created_at: text,
  featured_at: text,
  topics: z.array(text).nullish().catch(null),
  media: z.array(Media.catch({})).nullish().catch(null),
  thumbnail: z.looseObject({ url: text, type: text }).nullish().catch(null),
  product_links: z.array(ProductLink.catch({})).nullish().catch(null),
  comments: z.array(Comment.catch({})).nullish().catch(null),
  updated_at: text,
});
export type Product = z.infer<typeof Product>;

export const ProductListSuccess = z.looseObject({
  result: z.literal('success'),
  markdown: z.array(z.string()).nullish(),
  metadata: z.array(Product),
});
export type ProductListSuccess = z.infer<typeof ProductListSuccess>;

export const ProductDetailSuccess = z.looseObject({
  result: z.literal('success'),
  markdown: text,
  metadata: Product,
});
export type ProductDetailSuccess = z.infer<typeof ProductDetailSuccess>;

/** The documented error body; a 200 may carry it too. */
export const ErrorBody = z.looseObject({
  status: z.literal('error'),
  error: z.looseObject({
    code: z.string().min(1),
    message: text,
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/**
 * Reads a parsed answer with `schema` as daybook stores it: through storable() (src/upstream/json.ts),
 * so text Postgres refuses carries U+FFFD and a number beyond any column is null. The client, the
 * rebuild and the recovery of a landed answer all read answers so.
 */
export function readStored<S extends z.ZodType>(schema: S, body: unknown) {
  return schema.safeParse(storable(body));
}
