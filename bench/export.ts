/**
 * Warehouse export throughput (src/export/): a full load package of a synthetic history, in every
 * format, side by side with the limit of what Postgres hands out.
 *
 * 1. A scratch database is filled by SQL (generate_series, no simulator): 90,000 enterprises and
 *    100,000 versions (10,000 enterprises changed once, their first version closed), 200,000 key
 *    personnel, 100,000 shareholders, liquidation members, 50,000 field changes with their events,
 *    observations, sightings (written by the triggers of migration 0013), 100,000 credit ledger
 *    entries and 2,000 runs: about 800,000 rows to export, Chinese text where the registry has
 *    it. The upstream calls the versions were read from are landed by the project's own
 *    `landRaw` (src/landing/landing.ts, stub bodies: the export reads none), so the seed follows
 *    the raw landing as it changes. Each step commits on its own, so the rows carry several
 *    writing transactions. The product tables stay empty.
 * 2. Baseline: for every table, `COPY (<the select the NDJSON writer runs inside to_json>) TO
 *    STDOUT` through psql, its output to /dev/null: the same rows, columns, expressions, range and
 *    order (selectSql of src/export/formats.ts), only not turned into JSON (COPY's text format).
 * 3. `exportPackages(sql, { full: true })` into a new folder, for Parquet, NDJSON, NDJSON+gzip
 *    and CSV, each in a process of its own as `daybook export` runs it (bench/export-child.ts):
 *    its time is that of `exportPackages` in that process (Node's start not counted), its peak
 *    RSS the whole process's. Each runs twice; the better run is kept. Each format also runs
 *    once in this process, as the benchmark measured it at first: that peak RSS includes what
 *    seeding left in this process (rssBeforeExportsMiB), and is shown beside the other.
 * 4. When a goal is missed (or with `profile: 'always'`), where the time goes, per table and
 *    summed: the baseline's own times; Postgres making the JSON lines and the CSV (the writers'
 *    own COPY statements, through psql to /dev/null); the writers themselves (writeNdjson and
 *    writeCsv of src/export/formats.ts to a file: that COPY through the driver, hashed and
 *    written); DuckDB turning the staged CSV into Parquet; and each table's time in the better
 *    NDJSON and Parquet exports (from their progress lines).
 *
 * Goals: CSV ≥ 0.8 × the baseline's rows/s, NDJSON ≥ 0.6 ×, Parquet ≥ 0.5 ×; every format's peak
 * RSS ≤ 400 MiB (the export's own process).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../src/db/connect.ts';
import { EXPORT_TABLES, type ExportTable, rangeSql, SNAPSHOT_ZERO } from '../src/export/contract.ts';
import {
  copyStatement,
  type Format,
  openParquetWriter,
  selectSql,
  writeCsv,
  writeNdjson,
} from '../src/export/formats.ts';
import { exportPackages } from '../src/export/package.ts';
import { type LandingRow, landRaw } from '../src/landing/landing.ts';
import { addDays } from '../src/time/cycles.ts';
import { type BenchDatabase, freshDatabase, round, runToEnd, tableClock } from './support.ts';

const REPEATS = 2;
const NDJSON_GOAL = 0.6;
const PARQUET_GOAL = 0.5;
const CSV_GOAL = 0.8;
/** Peak RSS of the export's own process (MiB). */
const RSS_GOAL_MIB = 400;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./export-child.ts', import.meta.url));

export interface ExportFormatRun {
  /** parquet, ndjson, ndjson+gzip or csv. */
  format: string;
  /** The better of the runs. */
  seconds: number;
  allSeconds: number[];
  rows: number;
  bytes: number;
  /** Peak RSS of the export's own process in the better run (as `daybook export` runs it). */
  peakRssMiB: number;
  /** Peak RSS within RSS_GOAL_MIB (the worst of the runs). */
  rssMet: boolean;
  /**
   * The export run once in the benchmark's own process, as first measured: its peak RSS (with
   * what seeding left there, rssBeforeExportsMiB) and seconds. Absent from results taken before.
   */
  inProcess?: { peakRssMiB: number; seconds: number };
  rowsPerSecond: number;
  /** rowsPerSecond / the baseline's. */
  vsBaseline: number;
  /** The goal (× baseline), when the format has one. */
  goal: number | null;
  met: boolean | null;
}

export interface ExportProfile {
  copySelectSeconds: number;
  copyToJsonSeconds: number;
  copyCsvSeconds: number;
  writeNdjsonSeconds: number;
  writeCsvSeconds: number;
  duckdbSeconds: number;
  /** The same tables' seconds within the better timed NDJSON and Parquet exports. */
  ndjsonExportSeconds: number;
  parquetExportSeconds: number;
  tables: {
    table: string;
    rows: number;
    copySelect: number;
    copyToJson: number;
    copyCsv: number;
    writeNdjson: number;
    writeCsv: number;
    duckdb: number;
    ndjsonExport: number;
    parquetExport: number;
  }[];
  note: string;
}

export interface ExportResult {
  rows: number;
  tables: Record<string, number>;
  seedSeconds: number;
  baseline: { method: string; seconds: number; allSeconds: number[]; rowsPerSecond: number };
  /** How many times each export ran (the better run is kept). */
  repeats: number;
  formats: ExportFormatRun[];
  /** This process's RSS before the first export (a format's inProcess.peakRssMiB includes it). */
  rssBeforeExportsMiB: number;
  profile: ExportProfile | null;
  /** The 1-minute load average before and after: other work on the machine skews the figures. */
  loadAverage: { before: number; after: number };
  target: string;
  met: boolean;
  note: string;
}

// ---------------------------------------------------------------------------------------------
// The select the NDJSON writer runs inside to_json (src/export/formats.ts selectSql, csv = false):
// the baseline copies exactly these columns. The profile runs the writers' own COPY statements
// (copyStatement) and checks the NDJSON it writes against the timed export's files, so a change
// to the writer is caught.

const exportSelect = (table: ExportTable, lo: string, hi: string) => selectSql(table, lo, hi, false);

// ---------------------------------------------------------------------------------------------
// The history.

/** How much history: enterprises (each with its first version) and runs. */
export interface ExportSize {
  enterprises: number;
  runs: number;
}

/** The measured size; a smoke run seeds a hundredth of it. */
export const EXPORT_SIZE: ExportSize = { enterprises: 90_000, runs: 2_000 };
/** Every ninth enterprise has a second version (its first closed). */
const REVISED_EVERY = 9;

const arr = (xs: string[]) => `array[${xs.map((x) => `'${x}'`).join(',')}]`;
const pick = (xs: string[], index: string) => `(${arr(xs)})[1 + ((${index}) % ${xs.length})::integer]`;

const CITIES = ['上海', '北京', '深圳', '广州', '杭州', '南京', '成都', '武汉'];
const PROVINCES = [31, 11, 44, 44, 33, 32, 51, 42];
const BRANDS = [
  '华信',
  '恒通',
  '瑞丰',
  '金源',
  '博远',
  '创新',
  '宏达',
  '天成',
  '鑫海',
  '中联',
  '汇智',
  '星辰',
  '远航',
  '嘉禾',
  '盛世',
  '蓝海',
  '云帆',
  '正泰',
  '永安',
  '新元',
];
const TRADES = ['科技', '贸易', '建设工程', '餐饮管理', '物流', '信息技术', '医药', '文化传媒'];
const SUFFIXES = ['有限公司', '股份有限公司', '有限责任公司'];
const SURNAMES = ['王', '李', '张', '刘', '陈', '杨', '黄', '赵', '吴', '周', '徐', '孙', '马', '朱'];
const GIVEN = [
  '伟',
  '芳',
  '娜',
  '敏',
  '静',
  '丽',
  '强',
  '磊',
  '军',
  '洋',
  '勇',
  '艳',
  '杰',
  '娟',
  '涛',
  '明',
];
const DISTRICTS = ['浦东新', '朝阳', '南山', '天河', '西湖', '鼓楼', '武侯', '江汉'];
const ROADS = ['人民', '解放', '中山', '建设', '和平', '长江', '科技', '世纪', '南京', '复兴'];
const SCOPES = [
  '一般项目：技术服务、技术开发、技术咨询、技术交流、技术转让、技术推广；软件开发；信息系统集成服务；计算机系统服务；数据处理服务；人工智能应用软件开发。（除依法须经批准的项目外，凭营业执照依法自主开展经营活动）',
  '许可项目：货物进出口；技术进出口。一般项目：日用百货销售；五金产品批发；电子产品销售；针纺织品销售；服装服饰批发；化妆品批发；办公用品销售；国内贸易代理。（除依法须经批准的项目外，凭营业执照依法自主开展经营活动）',
  '许可项目：建设工程施工；建设工程设计；住宅室内装饰装修。一般项目：园林绿化工程施工；土石方工程施工；建筑材料销售；机械设备租赁。（依法须经批准的项目，经相关部门批准后方可开展经营活动）',
  '许可项目：餐饮服务；食品销售。一般项目：餐饮管理；酒店管理；外卖递送服务；食用农产品零售；企业管理咨询。（除依法须经批准的项目外，凭营业执照依法自主开展经营活动）',
  '许可项目：道路货物运输（不含危险货物）。一般项目：国内货物运输代理；普通货物仓储服务（不含危险化学品等需许可审批的项目）；装卸搬运；供应链管理服务；包装服务。',
  '一般项目：信息技术咨询服务；网络技术服务；软件销售；计算机软硬件及辅助设备零售；广告设计、代理；广告制作；会议及展览服务；市场营销策划。',
  '许可项目：药品批发；第三类医疗器械经营。一般项目：第一类医疗器械销售；第二类医疗器械销售；保健食品（预包装）销售；化妆品零售；消毒剂销售（不含危险化学品）。',
  '许可项目：出版物零售；广播电视节目制作经营；营业性演出。一般项目：组织文化艺术交流活动；文艺创作；企业形象策划；数字内容制作服务（不含出版发行）；摄影扩印服务。',
];
const INDUSTRIES: [string, string, string][] = [
  ['信息传输、软件和信息技术服务业', '软件和信息技术服务业', '软件开发'],
  ['批发和零售业', '批发业', '贸易经纪与代理'],
  ['建筑业', '土木工程建筑业', '其他土木工程建筑'],
  ['住宿和餐饮业', '餐饮业', '正餐服务'],
  ['交通运输、仓储和邮政业', '道路运输业', '道路货物运输'],
  ['信息传输、软件和信息技术服务业', '互联网和相关服务', '互联网信息服务'],
  ['批发和零售业', '批发业', '医药及医疗器材批发'],
  ['文化、体育和娱乐业', '文化艺术业', '文艺创作与表演'],
];

/** A seeding step: a statement, or a call of the project's own functions. */
type Step = { what: string; sql: string } | { what: string; apply: (sql: Sql) => Promise<void> };

const LANDING_BATCH = 5000;

/**
 * The upstream calls the versions were read from, through `landRaw`: call g (1..n) answered the
 * first version of enterprise g, call n + k the second version of enterprise 9k. Each body is a
 * stub naming its PID (distinct, so each lands a body of its own). The ids must be 1, 2, … in
 * order (the SQL steps point at call g by id g), which a fresh database gives.
 */
async function landCalls(sql: Sql, size: ExportSize): Promise<void> {
  const n = size.enterprises;
  const calls = n + Math.floor(n / REVISED_EVERY);
  const start = Date.parse('2025-06-01T03:00:00+08:00');
  for (let from = 1; from <= calls; from += LANDING_BATCH) {
    const rows: LandingRow[] = [];
    for (let g = from; g <= Math.min(calls, from + LANDING_BATCH - 1); g++) {
      const enterprise = g <= n ? g : (g - n) * REVISED_EVERY;
      const pid = createHash('md5').update(`pid${enterprise}`).digest('hex').slice(0, 24);
      rows.push({
        runId: 1 + (g % (size.runs - 1)),
        cycle: addDays('2025-06-01', Math.floor(g / 2000)),
        operation: 'enterprise-search',
        params: { ent_name: `kw${g}` },
        httpStatus: 200,
        bodyText: JSON.stringify({
          status: 'success',
          markdown: null,
          metadata: { usage: { credits: 3, remark: 'enterprise-search' }, content: { PID: pid } },
        }),
        outcome: 'success',
        fetchedAt: new Date(start + g * 53_000),
        durationMs: 150 + (g % 400),
      });
    }
    const landed = await landRaw(sql, rows);
    const wrong = landed.findIndex((l, i) => l.id !== from + i);
    if (wrong >= 0)
      throw new Error(
        `raw_responses: call ${from + wrong} landed with id ${landed[wrong]?.id} (the seed needs a fresh database)`,
      );
  }
}

/**
 * The seeding statements, each its own transaction, in stages: a stage's lanes run side by side
 * (two connections: the machine has 2 cores), a lane's steps one after the other.
 */
function seedStages(size: ExportSize): Step[][][] {
  const n = size.enterprises;
  const RUNS = size.runs;
  const city = pick(CITIES, 'g');
  const person = (k: string) => `${pick(SURNAMES, k)} || ${pick(GIVEN, `(${k}) / 14`)}`;
  const trade = '((g / 160) % 8)';
  // The columns of a first version, from g (1..n); the subquery's row becomes `normalized`.
  const firstVersion = (from: number, to: number) => `
    select g,
      substr(md5('pid' || g), 1, 24) as pid,
      timestamptz '2025-06-01 03:00+08' + g * interval '53 seconds' as at,
      date '2025-06-01' + g / 2000 as cycle,
      ${city} || ${pick(BRANDS, 'g / 8')} || ${pick(TRADES, trade)} || ${pick(SUFFIXES, 'g / 1280')} as ent_name,
      case when g % 20 = 0 then ${city} || ${pick(BRANDS, 'g / 7')} || '实业有限公司' end as history_name,
      '91' || ${pick(PROVINCES.map(String), 'g')} || lpad((g % 9973)::text, 4, '0') || 'MA' || upper(substr(md5('u' || g), 1, 8)) || (g % 10) as uncid,
      lpad((310000000000000 + g * 7)::text, 15, '0') as reg_no,
      ${person('g')} as legal_person,
      ${pick(['执行董事兼总经理', '董事长', '执行董事', '经理', '负责人'], 'g')} as legal_person_desc,
      ${pick(['有限责任公司(自然人投资或控股)', '有限责任公司(自然人独资)', '股份有限公司(非上市、自然人投资或控股)', '有限责任公司(法人独资)'], 'g / 3')} as ent_type,
      ${pick(['1130', '1151', '1223', '1190'], 'g / 3')} as ent_type_code,
      case when g % 50 = 0 then '注销' when g % 77 = 0 then '吊销，未注销' when g % 91 = 0 then '清算' else '存续' end as ent_status,
      round(((g % 997) * 10.5 + 10)::numeric, 4) as reg_cap,
      (g % 20 = 0) as usd,
      ${pick(PROVINCES.map(String), 'g')}::smallint as province,
      date '1995-01-01' + (g * 7) % 10000 as es_date,
      (g % 5 < 2) as perpetual,
      ${city} || '市' || ${pick(DISTRICTS, 'g / 3')} || '区市场监督管理局' as reg_org,
      date '2015-01-01' + (g * 11) % 3650 as appr_date,
      ${city} || '市' || ${pick(DISTRICTS, 'g / 3')} || '区' || ${pick(ROADS, 'g / 7')} || '路' || (g % 999 + 1) || '号' || (g % 30 + 1) || '层' || (g % 20 + 1) || '室' as op_loc,
      ${pick(SCOPES, trade)} as op_scope,
      (g % 200)::text as participants,
      ${pick(
        INDUSTRIES.map((i) => i[0]),
        trade,
      )} as industry_phy,
      ${pick(
        INDUSTRIES.map((i) => i[1]),
        trade,
      )} as industry_big,
      ${pick(
        INDUSTRIES.map((i) => i[2]),
        trade,
      )} as industry_middle,
      (g % 400 = 0) as is_listed,
      case when g % 3 = 0 then '货币' end as sconform,
      ${person('g / 3 + 5')} as supervisor
    from generate_series(${from}, ${to}) g`;
  const versionColumns = `pid, version, valid_from, valid_to, is_current, content_hash, cycle, raw_response_id,
    ent_name, history_name, is_listed, legal_person, legal_person_desc, es_date, sconform, reg_no, uncid,
    ent_type_code, ent_type, reg_cap, reg_cap_text, capital_text, capital_unit, capital_currency,
    capital_amount, province, op_from, operating_to, operating_perpetual, operating_to_text, reg_org,
    appr_date, revoke_date, revoke_reason, ent_status, op_loc, op_scope, participants, participants_count,
    industry_phy, industry_big, industry_middle, unread_text, extra, normalized`;
  const firstVersions = (from: number, to: number): Step => ({
    what: `enterprise_versions (first, ${from}..${to})`,
    sql: `
        insert into enterprise_versions (${versionColumns})
        select s.pid, 1, s.at, null, true, encode(sha256(convert_to(s.pid || s.ent_name || s.op_loc, 'UTF8')), 'hex'),
          s.cycle, s.g, s.ent_name, s.history_name, s.is_listed, s.legal_person, s.legal_person_desc, s.es_date,
          s.sconform, s.reg_no, s.uncid, s.ent_type_code, s.ent_type, s.reg_cap, null,
          case when s.usd then s.reg_cap || '万美元' else s.reg_cap || '万人民币' end, '万',
          case when s.usd then '美元' else '人民币' end, s.reg_cap * 10000, s.province, s.es_date,
          case when not s.perpetual then (s.es_date + interval '20 years')::date end, s.perpetual,
          case when s.perpetual then '长期' end, s.reg_org, s.appr_date,
          case when s.ent_status in ('注销', '吊销，未注销') then s.appr_date + 400 end,
          case when s.ent_status = '注销' then '决议解散' when s.ent_status = '吊销，未注销' then '未按规定年报' end,
          s.ent_status, s.op_loc, s.op_scope, s.participants, s.participants::integer,
          s.industry_phy, s.industry_big, s.industry_middle,
          case when s.g % 100 = 0 then jsonb_build_object('ESDATE', '无') else '{}'::jsonb end,
          case when s.g % 10 = 0 then jsonb_build_object('TEL', '021-' || (50000000 + s.g), 'EMAIL', 'info' || s.g || '@example.cn') else '{}'::jsonb end,
          to_jsonb(s) - 'g' - 'at' - 'usd' - 'perpetual'
        from (${firstVersion(from, to)}) s`,
  });
  const half = Math.floor(n / 2);
  const steps: Step[] = [
    {
      what: 'runs',
      sql: `
        insert into runs (kind, cycle, entity, job_id, started_at, finished_at, outcome, error_code, error_message, counts, credits)
        select ${pick(['enterprise', 'plan', 'products', 'cycle-close'], 'g')},
          date '2025-06-01' + g / 12, case when g % 4 = 0 then 'batch-' || g end, 'job-' || g,
          timestamptz '2025-06-01 03:00+08' + g * interval '2 hours',
          timestamptz '2025-06-01 03:00+08' + g * interval '2 hours' + (g % 600) * interval '1 second',
          case when g = ${RUNS} then 'running' when g % 50 = 0 then 'failed' when g % 23 = 0 then 'skipped' else 'succeeded' end,
          case when g % 50 = 0 then 'upstream_timeout' end,
          case when g % 50 = 0 then '上游接口超时 (no answer within 30000 ms)' end,
          jsonb_build_object('fetched', g % 100, 'changed', g % 7, 'unchanged', g % 93, 'failed', g % 3),
          (g % 100) * 3
        from generate_series(1, ${RUNS}) g`,
    },
    { what: 'raw_responses', apply: (sql) => landCalls(sql, size) },
    {
      what: 'enterprises',
      sql: `
        insert into enterprises (pid, first_seen_at, last_seen_at, last_seen_raw_id, presence)
        select substr(md5('pid' || g), 1, 24), timestamptz '2025-06-01 03:00+08' + g * interval '53 seconds',
          timestamptz '2025-06-01 03:00+08' + g * interval '53 seconds', g, 'present'
        from generate_series(1, ${n}) g`,
    },
    {
      what: 'enterprise_versions (closed)',
      sql: `
        update enterprise_versions set valid_to = valid_from + interval '45 days', is_current = false
        where version = 1 and raw_response_id % ${REVISED_EVERY} = 0`,
    },
    {
      what: 'enterprise_versions (second)',
      sql: `
        insert into enterprise_versions (${versionColumns})
        select pid, 2, valid_to, null, true, encode(sha256(convert_to(content_hash || '2', 'UTF8')), 'hex'),
          cycle + 45, ${n} + raw_response_id / ${REVISED_EVERY}, ent_name, history_name, is_listed,
          ${person('raw_response_id / 9 + 3')}, legal_person_desc, es_date, sconform, reg_no, uncid,
          ent_type_code, ent_type, reg_cap * 2, reg_cap_text, (reg_cap * 2) || '万' || capital_currency, capital_unit,
          capital_currency, capital_amount * 2, province, op_from, operating_to, operating_perpetual,
          operating_to_text, reg_org, cycle + 44,
          case when raw_response_id % 4 = 0 then cycle + 44 end, case when raw_response_id % 4 = 0 then '决议解散' end,
          case when raw_response_id % 4 = 0 then '注销' else ent_status end,
          replace(op_loc, '路', '大道'), op_scope, participants, participants_count,
          industry_phy, industry_big, industry_middle, unread_text, extra,
          normalized || jsonb_build_object('op_loc', replace(op_loc, '路', '大道'), 'reg_cap', reg_cap * 2)
        from enterprise_versions where version = 1 and not is_current`,
    },
    {
      what: 'enterprise_persons',
      sql: `
        insert into enterprise_persons (version_id, ordinal, name, position, extra)
        select v.id, k, case k when 0 then v.legal_person else ${person('v.id / 3 + 5')} end,
          case k when 0 then v.legal_person_desc else '监事' end,
          case when k = 1 and v.id % 25 = 0 then '{"CERTYPE": "中华人民共和国居民身份证"}'::jsonb else '{}'::jsonb end
        from enterprise_versions v cross join generate_series(0, 1) k`,
    },
    {
      what: 'enterprise_shareholders',
      sql: `
        insert into enterprise_shareholders (version_id, ordinal, name, type, shareholder_pid, extra)
        select v.id, 0,
          case when v.id % 5 = 0 then ${pick(CITIES, 'v.id / 5')} || ${pick(BRANDS, 'v.id / 11')} || '投资管理有限公司' else v.legal_person end,
          case when v.id % 5 = 0 then '企业法人' else '自然人股东' end,
          case when v.id % 5 = 0 then substr(md5('pid' || (v.id * 7 % ${n} + 1)), 1, 24) end,
          case when v.id % 10 = 0 then jsonb_build_object('SUBCONAM', (v.reg_cap)::text, 'CONDATE', v.es_date::text, 'CONFORM', '货币') else '{}'::jsonb end
        from enterprise_versions v`,
    },
    {
      what: 'enterprise_clearing_members',
      sql: `
        insert into enterprise_clearing_members (version_id, ordinal, name, position, extra)
        select v.id, k, case k when 0 then v.legal_person else ${person('v.id / 3 + 7')} end,
          case k when 0 then '清算组负责人' else '清算组成员' end, '{}'::jsonb
        from enterprise_versions v cross join generate_series(0, 1) k
        where v.ent_status in ('注销', '清算')`,
    },
    {
      what: 'enterprise_sightings (current versions)',
      sql: `
        update enterprises e set current_version_id = v.id, last_seen_at = v.valid_from, last_seen_raw_id = v.raw_response_id
        from enterprise_versions v where v.pid = e.pid and v.is_current`,
    },
    {
      what: 'enterprise_sightings (disappeared)',
      sql: `update enterprises set presence = 'disappeared', last_seen_at = last_seen_at + interval '90 days'
            where last_seen_raw_id % 53 = 0`,
    },
    {
      what: 'enterprise_changes',
      sql: `
        insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at)
        select nv.pid, nv.cycle, nv.id, pv.id,
          (array['status','address','capital','legal_person','personnel'])[k],
          (array['ent_status','op_loc','reg_cap','legal_person','persons[监事]'])[k],
          case when k = 5 then 'added' else 'modified' end,
          case k when 1 then pv.ent_status when 2 then pv.op_loc when 3 then pv.reg_cap::text when 4 then pv.legal_person end,
          case k when 1 then nv.ent_status when 2 then nv.op_loc when 3 then nv.reg_cap::text when 4 then nv.legal_person else nv.legal_person end,
          case k when 1 then '登记状态由“' || pv.ent_status || '”变更为“' || nv.ent_status || '”'
                 when 2 then '住所变更' when 3 then '注册资本由' || pv.reg_cap || '万变更为' || nv.reg_cap || '万'
                 when 4 then '法定代表人由' || pv.legal_person || '变更为' || nv.legal_person
                 else '新增主要人员：' || nv.legal_person end,
          (array['high','medium','medium','high','low'])[k], nv.valid_from
        from enterprise_versions nv
        join enterprise_versions pv on pv.pid = nv.pid and pv.version = 1
        cross join generate_series(1, 5) k
        where nv.version = 2
        order by nv.id, k`,
    },
    {
      what: 'enterprise_observations',
      sql: `
        insert into enterprise_observations (pid, kind, cycle, keyword, detail, raw_response_id, observed_at)
        select v.pid, 'initial', v.cycle, v.ent_name, null, v.raw_response_id, v.valid_from
        from enterprise_versions v where v.version = 1
        union all
        select e.pid, 'disappeared', date '2025-12-01', null, '查询未找到该企业 (not_found)', null, e.last_seen_at
        from enterprises e where e.presence = 'disappeared'`,
    },
    {
      what: 'events',
      sql: `
        insert into events (type, severity, pid, name, company_seq, cycle, detected_at, effective_date, raw_response_id, data)
        select case ch.category when 'status' then 'company.status.changed' when 'address' then 'company.address.changed'
                 when 'capital' then 'company.capital.increased' when 'legal_person' then 'company.legal_representative.changed'
                 else 'company.key_personnel.changed' end,
          ch.severity, ch.pid, v.ent_name, row_number() over (partition by ch.pid order by ch.id)::integer, ch.cycle,
          ch.detected_at, v.appr_date, v.raw_response_id,
          jsonb_build_object('field', ch.field, 'kind', ch.kind, 'before', ch.before, 'after', ch.after,
            'detail', ch.detail, 'from_version', 1, 'to_version', 2)
        from enterprise_changes ch join enterprise_versions v on v.id = ch.version_id
        union all
        select 'cycle.completed', 'low', null, null, null, date '2025-06-01' + g, timestamptz '2025-06-01 05:00+08' + g * interval '1 day',
          null, null, jsonb_build_object('cycle', (date '2025-06-01' + g)::text, 'fetched', 2000 + g, 'changed', 60 + g % 40)
        from generate_series(0, 149) g`,
    },
    {
      what: 'credit_ledger',
      sql: `
        insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status, watch_id)
        select v.cycle, daybook_ledger_subject('enterprise-search', v.pid, v.ent_name, 'enterprise-search'), 3,
          1 + v.raw_response_id % ${RUNS - 1}, v.raw_response_id, v.valid_from, 'booked', v.raw_response_id % ${n} + 1
        from enterprise_versions v
        union all
        select date '2025-06-01' + g, daybook_ledger_subject('enterprise-search', null, '企业' || g, 'presumed: no answer'),
          3, 1 + g, null, timestamptz '2025-06-01 03:00+08' + g * interval '1 day', 'presumed', g
        from generate_series(1, 100) g`,
    },
  ];
  const step = (what: string) => steps.find((x) => x.what === what) as Step;
  return [
    [[step('runs'), step('raw_responses')], [step('enterprises')]],
    [[firstVersions(1, half)], [firstVersions(half + 1, n)]],
    [[step('enterprise_versions (closed)'), step('enterprise_versions (second)')]],
    [
      [step('enterprise_persons')],
      [
        step('enterprise_shareholders'),
        step('enterprise_clearing_members'),
        step('enterprise_sightings (current versions)'),
        step('enterprise_sightings (disappeared)'),
      ],
    ],
    [
      [step('enterprise_changes'), step('events')],
      [step('enterprise_observations'), step('credit_ledger')],
    ],
  ];
}

/** Fills `db` with the history; returns the seconds it took (vacuum and analyze included). */
export async function seedExportHistory(db: BenchDatabase, size: ExportSize = EXPORT_SIZE): Promise<number> {
  const t = performance.now();
  for (const stage of seedStages(size)) {
    await Promise.all(
      stage.map(async (lane) => {
        for (const step of lane) {
          const s = performance.now();
          if ('sql' in step) await db.sql.unsafe(step.sql);
          else await step.apply(db.sql);
          process.stderr.write(
            `bench: export: seeded ${step.what} (${round((performance.now() - s) / 1000, 1)} s)\n`,
          );
        }
      }),
    );
  }
  // Hint bits and statistics set once, before any timed read; two tables at a time.
  const tables = await db.sql<{ name: string }[]>`
    select relname as name from pg_stat_user_tables where schemaname = 'public' order by n_live_tup desc`;
  const names = tables.map((r) => r.name);
  await Promise.all(
    [0, 1].map(async (lane) => {
      for (let i = lane; i < names.length; i += 2) await db.sql.unsafe(`vacuum (analyze) "${names[i]}"`);
    }),
  );
  return round((performance.now() - t) / 1000, 1);
}

// ---------------------------------------------------------------------------------------------
// Measurements.

/** Runs `statements` in one psql session, output to /dev/null; returns each one's \timing in ms. */
async function psqlTimings(url: string, statements: string[]): Promise<number[]> {
  const script = `\\o /dev/null\n\\timing on\n${statements.map((s) => `${s.replaceAll('\n', ' ')};\n`).join('')}`;
  const out = await runToEnd('psql', 'psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-f', '-'], {
    input: script,
  });
  const ms = [...out.matchAll(/^Time: ([\d.]+) ms/gm)].map((m) => Number(m[1]));
  if (ms.length !== statements.length)
    throw new Error(`psql reported ${ms.length} timings for ${statements.length} statements`);
  return ms;
}

const copyOut = (select: string) => `copy (${select}) to stdout`;

/** The cut a full export would take now (every seeded transaction has committed). */
async function currentSnapshot(sql: Sql): Promise<string> {
  const [row] = await sql<{ hi: string }[]>`select pg_current_snapshot()::text as hi`;
  return row?.hi as string;
}

interface ExportRun {
  seconds: number;
  rows: number;
  bytes: number;
  peakRssMiB: number;
  /** Rows and file hashes per table, from the manifest. */
  tables: Record<string, number>;
  sha256: Record<string, string>;
  /** Seconds per table, from the writer's progress lines (an empty table's time is in the next). */
  tableSeconds: Record<string, number>;
}

/** Each table's rows and sha256, from a written package's manifest. */
async function packageTables(dir: string): Promise<Pick<ExportRun, 'tables' | 'sha256'>> {
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as {
    tables: Record<string, { rows: number; sha256: string }>;
  };
  const entries = Object.entries(manifest.tables);
  return {
    tables: Object.fromEntries(entries.map(([k, v]) => [k, v.rows])),
    sha256: Object.fromEntries(entries.map(([k, v]) => [k, v.sha256])),
  };
}

/** One full export into a new folder, removed afterwards. */
async function timeExport(
  db: BenchDatabase,
  root: string,
  label: string,
  format: Format,
  gzip: boolean,
): Promise<ExportRun> {
  const to = mkdtempSync(join(root, `${label.replace('+', '-')}-`));
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  try {
    const { progress, tableSeconds } = tableClock(EXPORT_TABLES.map((x) => x.name));
    const start = performance.now();
    const [written] = await exportPackages(db.sql, { to, format, gzip, full: true, progress });
    const seconds = (performance.now() - start) / 1000;
    if (!written) throw new Error(`the ${label} export wrote no package`);
    return {
      seconds,
      rows: written.rows,
      bytes: written.bytes,
      peakRssMiB: Math.round(peak / 1024 ** 2),
      ...(await packageTables(written.dir)),
      tableSeconds,
    };
  } finally {
    clearInterval(sampler);
    rmSync(to, { recursive: true, force: true });
  }
}

/** One full export in a process of its own (bench/export-child.ts), into a new folder, removed afterwards. */
async function timeExportInChild(
  db: BenchDatabase,
  root: string,
  label: string,
  format: Format,
  gzip: boolean,
): Promise<ExportRun> {
  const to = mkdtempSync(join(root, `${label.replace('+', '-')}-`));
  try {
    const out = await runToEnd(
      `${label} export`,
      process.execPath,
      ['--import', 'tsx', CHILD, db.url, to, format, ...(gzip ? ['gzip'] : [])],
      { cwd: ROOT },
    );
    const r = JSON.parse(out.trim().split('\n').pop() as string) as {
      seconds: number;
      dir: string;
      rows: number;
      bytes: number;
      tableSeconds: Record<string, number>;
      maxRssKiB: number;
    };
    return {
      seconds: r.seconds,
      rows: r.rows,
      bytes: r.bytes,
      peakRssMiB: Math.round(r.maxRssKiB / 1024),
      ...(await packageTables(r.dir)),
      tableSeconds: r.tableSeconds,
    };
  } finally {
    rmSync(to, { recursive: true, force: true });
  }
}

/**
 * The stages the timed runs do not show apart, per table, once: Postgres making the JSON lines
 * and the CSV (the writers' own COPY statements through psql, output to /dev/null); then
 * writeNdjson and writeCsv of src/export/formats.ts to a file (the COPY through the driver,
 * hashed and written), and DuckDB (ParquetWriter.write) turning the staged CSV into Parquet. The
 * NDJSON written here is checked against the timed export's: the statements are the writer's.
 */
async function profileStages(
  db: BenchDatabase,
  root: string,
  lo: string,
  hi: string,
  ndjsonSha256: Record<string, string>,
): Promise<{
  copyToJson: number[];
  copyCsv: number[];
  writeNdjson: number[];
  writeCsv: number[];
  duckdb: number[];
}> {
  const seconds = (ms: number[]) => ms.map((x) => x / 1000);
  const copyToJson = seconds(
    await psqlTimings(
      db.url,
      EXPORT_TABLES.map((t) => copyStatement(t, lo, hi, 'ndjson')),
    ),
  );
  const copyCsv = seconds(
    await psqlTimings(
      db.url,
      EXPORT_TABLES.map((t) => copyStatement(t, lo, hi, 'csv')),
    ),
  );
  const ndjson: number[] = [];
  const csv: number[] = [];
  const duckdb: number[] = [];
  const dir = mkdtempSync(join(root, 'profile-'));
  const parquet = await openParquetWriter();
  try {
    await db.sql.begin('isolation level repeatable read read only', async (tx) => {
      for (const table of EXPORT_TABLES) {
        const path = join(dir, table.name);
        let t = performance.now();
        const lines = await writeNdjson(tx, table, lo, hi, `${path}.ndjson`, false);
        ndjson.push((performance.now() - t) / 1000);
        rmSync(`${path}.ndjson`);
        if (ndjsonSha256[table.name] && lines.sha256 !== ndjsonSha256[table.name])
          throw new Error(
            `${table.name}: the NDJSON written here is not the timed export's (src/export/formats.ts changed?)`,
          );
        t = performance.now();
        const staged = await writeCsv(tx, table, lo, hi, `${path}.csv`);
        csv.push((performance.now() - t) / 1000);
        t = performance.now();
        await parquet.write(table, `${path}.csv`, `${path}.parquet`, staged.rows);
        duckdb.push((performance.now() - t) / 1000);
        rmSync(`${path}.parquet`);
      }
    });
  } finally {
    parquet.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { copyToJson, copyCsv, writeNdjson: ndjson, writeCsv: csv, duckdb };
}

export interface ExportOptions {
  /** `always`: the profile even when every goal is met. */
  profile?: 'auto' | 'always';
  size?: ExportSize;
  /** Runs of each export (the better is kept). */
  repeats?: number;
}

export async function benchExport(options: ExportOptions = {}): Promise<ExportResult> {
  const repeats = options.repeats ?? REPEATS;
  const loadBefore = loadavg()[0] as number;
  const db = await freshDatabase('export', 2);
  const root = mkdtempSync(join(tmpdir(), 'daybook-bench-export-'));
  try {
    const seedSeconds = await seedExportHistory(db, options.size ?? EXPORT_SIZE);
    const lo = SNAPSHOT_ZERO;
    const hi = await currentSnapshot(db.sql);
    const counts: Record<string, number> = {};
    for (const table of EXPORT_TABLES) {
      const [row] = await db.sql.unsafe<{ n: number }[]>(
        rangeSql(`select count(*)::int as n from ${table.from} where ${table.where}`, lo, hi),
      );
      counts[table.name] = row?.n ?? 0;
    }
    const rows = Object.values(counts).reduce((a, b) => a + b, 0);
    process.stderr.write(`bench: export: ${rows} rows to export (seeded in ${seedSeconds} s)\n`);

    // Baseline: every table's select, COPY TO STDOUT through psql into /dev/null. Run before,
    // between and after the exports (other work on the machine comes and goes); the best counts.
    const copies = EXPORT_TABLES.map((t) => copyOut(exportSelect(t, lo, hi)));
    const baselineRuns: number[][] = [];
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const baseline = async () => {
      const run = (await psqlTimings(db.url, copies)).map((ms) => ms / 1000);
      baselineRuns.push(run);
      process.stderr.write(
        `bench: export: baseline COPY ${round(sum(run), 2)} s (${Math.round(rows / sum(run))} rows/s)\n`,
      );
    };
    await baseline();

    const rssBeforeExportsMiB = Math.round(process.memoryUsage().rss / 1024 ** 2);
    const best: Record<string, ExportRun> = {};
    const all: Record<string, ExportRun[]> = {};
    const inProcess: Record<string, ExportRun> = {};
    const plan: { label: string; format: Format; gzip: boolean; goal: number | null }[] = [
      { label: 'parquet', format: 'parquet', gzip: false, goal: PARQUET_GOAL },
      { label: 'ndjson', format: 'ndjson', gzip: false, goal: NDJSON_GOAL },
      { label: 'ndjson+gzip', format: 'ndjson', gzip: true, goal: null },
      { label: 'csv', format: 'csv', gzip: false, goal: CSV_GOAL },
    ];
    for (const [i, p] of plan.entries()) {
      const here = await timeExport(db, root, p.label, p.format, p.gzip);
      inProcess[p.label] = here;
      const runs: ExportRun[] = [];
      for (let r = 0; r < repeats; r++)
        runs.push(await timeExportInChild(db, root, p.label, p.format, p.gzip));
      const b = runs.reduce((a, x) => (x.seconds < a.seconds ? x : a));
      best[p.label] = b;
      all[p.label] = runs;
      for (const run of [here, ...runs]) {
        for (const [name, n] of Object.entries(run.tables))
          if (counts[name] !== n)
            throw new Error(`${p.label}: ${name} has ${n} rows, the select ${counts[name]}`);
        for (const [name, h] of Object.entries(run.sha256))
          if (h !== b.sha256[name]) throw new Error(`${p.label}: ${name} differs from one run to another`);
      }
      process.stderr.write(
        `bench: export: ${p.label} ${round(b.seconds, 2)} s (${Math.round(b.rows / b.seconds)} rows/s), peak RSS ${b.peakRssMiB} MiB; in this process ${round(here.seconds, 2)} s, peak RSS ${here.peakRssMiB} MiB\n`,
      );
      if (i % 2 === 1) await baseline();
    }
    const baselineBest = baselineRuns.reduce((a, b) => (sum(b) < sum(a) ? b : a));
    const baselineSeconds = sum(baselineBest);
    const baselineRate = rows / baselineSeconds;
    const formats: ExportFormatRun[] = plan.map((p) => {
      const b = best[p.label] as ExportRun;
      const rate = b.rows / b.seconds;
      const vs = rate / baselineRate;
      return {
        format: p.label,
        seconds: round(b.seconds, 2),
        allSeconds: (all[p.label] ?? []).map((x) => round(x.seconds, 2)),
        rows: b.rows,
        bytes: b.bytes,
        peakRssMiB: b.peakRssMiB,
        rssMet: Math.max(...(all[p.label] ?? []).map((x) => x.peakRssMiB)) <= RSS_GOAL_MIB,
        inProcess: {
          peakRssMiB: (inProcess[p.label] as ExportRun).peakRssMiB,
          seconds: round((inProcess[p.label] as ExportRun).seconds, 2),
        },
        rowsPerSecond: Math.round(rate),
        vsBaseline: round(vs, 3),
        goal: p.goal,
        met: p.goal === null ? null : vs >= p.goal,
      };
    });
    const met = formats.every((f) => f.met !== false && f.rssMet);

    let profile: ExportProfile | null = null;
    if (!met || options.profile === 'always') {
      const stages = await profileStages(db, root, lo, hi, best.ndjson?.sha256 ?? {});
      const ndjson = best.ndjson?.tableSeconds ?? {};
      const parquet = best.parquet?.tableSeconds ?? {};
      const tables = EXPORT_TABLES.map((t, i) => ({
        table: t.name,
        rows: counts[t.name] ?? 0,
        copySelect: round(baselineBest[i] as number, 3),
        copyToJson: round(stages.copyToJson[i] as number, 3),
        copyCsv: round(stages.copyCsv[i] as number, 3),
        writeNdjson: round(stages.writeNdjson[i] as number, 3),
        writeCsv: round(stages.writeCsv[i] as number, 3),
        duckdb: round(stages.duckdb[i] as number, 3),
        ndjsonExport: ndjson[t.name] ?? 0,
        parquetExport: parquet[t.name] ?? 0,
      })).filter((t) => t.rows > 0);
      const total = (k: Exclude<keyof (typeof tables)[number], 'table' | 'rows'>) =>
        round(sum(tables.map((t) => t[k])), 2);
      profile = {
        copySelectSeconds: total('copySelect'),
        copyToJsonSeconds: total('copyToJson'),
        copyCsvSeconds: total('copyCsv'),
        writeNdjsonSeconds: total('writeNdjson'),
        writeCsvSeconds: total('writeCsv'),
        duckdbSeconds: total('duckdb'),
        ndjsonExportSeconds: total('ndjsonExport'),
        parquetExportSeconds: total('parquetExport'),
        tables: tables.sort((a, b) => b.writeCsv + b.duckdb - (a.writeCsv + a.duckdb)),
        note: "seconds summed over the tables with rows, each stage run once after the timed runs. copySelect: the baseline; copyToJson / copyCsv: the NDJSON and CSV writers' own COPY statements through psql to /dev/null (Postgres making the lines); writeNdjson / writeCsv: src/export/formats.ts writeNdjson and writeCsv to a file (that COPY through the driver, hashed and written; the Parquet path stages the CSV); duckdb: ParquetWriter.write of the staged CSV (DuckDB reads it, writes Parquet, counts inexact decimals, hashes the file); ndjsonExport / parquetExport: the table in the better timed export (from its progress lines)",
      };
    }
    const loadAfter = loadavg()[0] as number;
    return {
      rows,
      tables: counts,
      seedSeconds,
      baseline: {
        method:
          "psql: COPY (<the NDJSON writer's select, without to_json>) TO STDOUT, all tables in one session, output to /dev/null; time = sum of psql \\timing",
        seconds: round(baselineSeconds, 2),
        allSeconds: baselineRuns.map((r) => round(sum(r), 2)),
        rowsPerSecond: Math.round(baselineRate),
      },
      repeats,
      formats,
      rssBeforeExportsMiB,
      profile,
      loadAverage: { before: round(loadBefore, 2), after: round(loadAfter, 2) },
      target: `CSV >= ${CSV_GOAL} x baseline rows/s, NDJSON >= ${NDJSON_GOAL} x, Parquet >= ${PARQUET_GOAL} x; peak RSS <= ${RSS_GOAL_MIB} MiB in every format`,
      met,
      note: `full package of all ${EXPORT_TABLES.length} tables (the product tables empty) through exportPackages, each export in a process of its own as \`daybook export\` runs it (bench/export-child.ts), wall time of exportPackages in it (Node's start not counted) including the ledger claim and fsyncs; every export figure the better of ${repeats} runs, the baseline the best of ${baselineRuns.length} (before, between and after the exports); bytes: the table files of the package; peak RSS: the export's own process (DuckDB runs in it), its maxRSS; inProcess: one more run of each format in the benchmark's own process, as first measured (its peak RSS includes rssBeforeExportsMiB left by seeding; every package identical to the others)`,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
    await db.drop();
  }
}
