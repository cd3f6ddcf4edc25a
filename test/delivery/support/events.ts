/** Events made by hand for the channel tests: a Chinese company name, and a hostile one. */
import type { Known } from '../../../src/delivery/channels/message.ts';
import type { Envelope } from '../../../src/events/feed.ts';

export const HOSTILE =
  '**evil** [click](https://evil.example/x) ![img](https://evil.example/i.png) <at user_id="all">所有人</at> @all <a href="https://evil.example">x</a> \u001b[31mred\u001b[0m # h1 www.evil.example';
export const CHINESE = '北京字节跳动科技有限公司（分公司）';

/** The data of a registration status change, 存续 → 注销, as the history writes it. */
export const STATUS_CHANGE = {
  category: 'status',
  field: 'ENTSTATUS',
  kind: 'modified',
  previous: '存续',
  current: '注销',
  detail: 'to_bad',
  from_version: 1,
  to_version: 2,
} as const;

let seq = 0;
export function change(over: Partial<Envelope> = {}, data: Record<string, unknown> = {}): Envelope {
  seq++;
  return {
    id: `evt_${seq}`,
    type: 'company.status.changed',
    sequence: seq,
    company_sequence: 1,
    severity: 'high',
    pid: `PID${String(seq).padStart(5, '0')}`,
    name: CHINESE,
    cycle: '2026-11-10',
    detected_at: '2026-11-10T03:40:00.000Z',
    effective_date: null,
    raw_response_id: null,
    data: { ...STATUS_CHANGE, ...data },
    ...over,
  };
}

/** The credit code every hand-made company has. */
export const USCC = '91110000600037341L';

/** What the tests' messages know of their companies: a credit code for each, capital in CNY. */
export const KNOWN: Known = { uscc: () => USCC, name: () => null, currency: () => 'CNY' };
