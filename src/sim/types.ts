/**
 * The simulator's canonical records: exactly the JSON the upstream documents, in its field names.
 * The world generators produce these; the server renders them (and may drift them when a fault
 * spec asks for format drift).
 */

export interface SimPerson {
  NAME: string;
  POSITION: string;
}

export interface SimShareholder {
  /** Present only when the shareholder is an enterprise; then it is a PID of the same world. */
  PID?: string;
  INV: string;
  INVTYPE: string;
}

export interface SimClearingMember {
  liqMem: string;
  ligpriSign: string;
}

/** metadata.content of an enterprise-search answer, as the spec documents it. */
export interface SimEnterprise {
  PID: string;
  ENTNAME: string;
  /** Former name; empty string when none. */
  HISTORYNAME: string;
  IS_LISTED: 0 | 1;
  LEGALPERSON: string;
  LEGALPERSONDESC: string;
  /** ISO 8601 with milliseconds and Z, e.g. 2008-05-12T00:00:00.000Z */
  ESDATE: string;
  SCONFORM: string;
  REGNO: string;
  UNCID: string;
  ENTTYPECODE: string;
  ENTTYPE: string;
  REGCAP: number;
  REGCAPCUR: string;
  PROVINCE: number;
  OPFROM: string;
  /** 9999-12-31, a date, or text such as 长期 / Long-term / Perpetual. */
  OPTO: string;
  REGORG: string;
  APPRDATE: string;
  /** Empty string when none. */
  REVOKEDATE: string;
  REVOKEREASON: string;
  ENTSTATUS: string;
  OPLOC: string;
  OPSCOPE: string;
  PERSONS: SimPerson[];
  BE_INVEST: SimShareholder[];
  participants: number;
  INDUSTRYPHY: string;
  INDUSTRYBIG: string;
  industry_middle: string;
  CLEARINGINFO: SimClearingMember[];
}

export interface SimMedia {
  url: string;
  type: string;
  videoUrl: string | null;
}

export interface SimComment {
  body: string;
  /** ISO 8601 with Z. */
  created_at: string;
}

/** One product object, as the spec documents it. */
export interface SimProduct {
  id: string;
  product_id: string;
  name: string;
  tagline: string;
  description: string;
  url: string;
  votes_count: number;
  comments_count: number;
  /** YYYY-MM-DDTHH:MM:SS, no zone. */
  created_at: string;
  featured_at: string;
  topics: string[];
  media: SimMedia[];
  thumbnail: { url: string; type: string };
  product_links: { url: string; type: string }[];
  comments: SimComment[];
  updated_at: string;
}
