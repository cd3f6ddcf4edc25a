/**
 * What the `daybook subscribe` commands (subscribe-*.ts) share: a receiver as shown, the error
 * of an id no subscription has, and a subscription paused or resumed.
 */
import { safeUrl } from '../delivery/engine.ts';
import { setSubscriptionState } from '../delivery/store.ts';
import { configOrExit, withStore } from './context.ts';
import { UsageError } from './usage.ts';

/** A receiver's URL as shown: its tokens cut (a mail list shows as it is). */
export function shownUrl(url: string): string {
  return /^mailto:/i.test(url) ? url : safeUrl(url);
}

/** The usage error of an id no subscription has. */
export function noSubscription(id: number): UsageError {
  return new UsageError(`there is no subscription ${id} (subscribe list shows them)`);
}

/** `subscribe pause` and `subscribe resume`: the subscription set to `state`, and its state said. */
export async function setState(id: number, state: 'paused' | 'active'): Promise<void> {
  const s = await withStore(configOrExit(), ({ sql }) => setSubscriptionState(sql, id, state));
  if (!s) throw noSubscription(id);
  process.stdout.write(`subscription ${id}: ${s.state}\n`);
}
