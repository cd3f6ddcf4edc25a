/** The simulator's options and their defaults: light, so the CLI can show them without starting a server. */
import { type FaultSpec, NO_FAULTS } from './faults.ts';

export type SimOperation = 'enterprise-search' | 'product-listing';

export interface SimOptions {
  seed: number;
  enterprises: number;
  /** Expected share of the whole world changed by each daily refresh (0 to 0.5). */
  changeShare: number;
  /** API keys and their starting credit balances. */
  keys: Map<string, number>;
  faults: FaultSpec;
  /** Requests per window per key and operation (sliding window). */
  rateLimits: Record<SimOperation, number>;
  /** The rate window: 60 s ("per minute"); tests shorten it to stay fast. */
  rateWindowMs: number;
  /** Calls per key per Beijing day, per operation; null for no cap. */
  dailyCap: number | null;
  /** Credits per successful call. The enterprise cost is documented (3); the product cost is not. */
  costs: Record<SimOperation, number>;
  /** `http`: errors get 4xx/5xx statuses; `200`: every error is an HTTP 200 with an error body. */
  errorStatus: 'http' | '200';
  /** Send Retry-After with rate-limit answers. */
  retryAfter: boolean;
  /** The code answered when date and product_name are sent together. */
  bothParamsCode: string;
  /** The code answered for a bad limit, or `clamp` to serve min(limit, 20) and ignore junk. */
  badLimitCode: string;
  /** Items returned when a list query has no limit. */
  defaultLimit: number;
  /** The simulated time at start; null to follow the system clock. */
  startAt: Date | null;
  /** First cycle / list date of the world. */
  epoch: string;
}

export const SANDBOX_KEY = 'sk-sandbox';
export const SANDBOX_CREDITS = 1_000_000;

export function defaultSimOptions(): SimOptions {
  return {
    seed: 1,
    enterprises: 5000,
    changeShare: 0.02,
    keys: new Map([[SANDBOX_KEY, SANDBOX_CREDITS]]),
    faults: NO_FAULTS,
    rateLimits: { 'enterprise-search': 100, 'product-listing': 100 },
    rateWindowMs: 60_000,
    dailyCap: null,
    costs: { 'enterprise-search': 3, 'product-listing': 0 },
    errorStatus: 'http',
    retryAfter: true,
    bothParamsCode: 'invalid_parameter',
    badLimitCode: 'invalid_parameter',
    defaultLimit: 10,
    startAt: null,
    epoch: '2026-01-01',
  };
}
