/**
 * Gate reports: a JSON summary (always), every run's v5 response, Lighthouse's HTML report for local runs, a
 * terminal table, and an optional archive to S3 under a stable key per URL and time.
 */
import { terminalText } from '../terminal-text.js';
import { expectArray, expectObject } from '../arguments.js';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { writeFileAtomic } from '../atomic-write.js';
import { CheckFailedError, ExitCode, GantryError, UsageError } from '../errors.js';
import { ensureFolder } from '../local-paths.js';
import { REDACTED, redact, redactUrl, sensitiveQueryParameters } from '../redact.js';
import type { CheckResult } from './evaluate.js';
import type { GateResult, UrlGateResult } from './gate.js';

/** The gate result without per-run payloads: what `--json` prints and `gate.json` holds. */
export interface GateSummary extends Omit<GateResult, 'urls'> {
  urls: Array<Omit<UrlGateResult, 'responses' | 'html'> & { reportUrl?: string; reportFiles?: string[] }>;
}

/** A check as it is shown: its URL masked, and its reason (an engine's message may quote the page URL) too. */
function shownCheck(check: CheckResult): CheckResult {
  return { ...check, url: redactUrl(check.url), ...(check.reason === undefined ? {} : { reason: redact(check.reason) }) };
}

/**
 * The summary shows every URL as `redactUrl` does (credentials in the query or userinfo masked), as `gantry browser
 * check` and the logs do: it is printed, written to disk and uploaded. The result itself keeps the URLs whole.
 */
export function summarize(result: GateResult, extra: Map<string, { reportUrl?: string; reportFiles?: string[] }> = new Map()): GateSummary {
  const shown = (url: string | undefined) => (url === undefined ? undefined : redactUrl(url));
  return {
    ...result,
    checks: result.checks.map(shownCheck),
    urls: result.urls.map(({ responses: _responses, html: _html, ...rest }) => ({
      ...rest,
      url: redactUrl(rest.url),
      finalUrl: shown(rest.finalUrl),
      checks: rest.checks.map(shownCheck),
      runs: rest.runs.map((run) => ({ ...run, finalUrl: shown(run.finalUrl) })),
      ...extra.get(rest.url),
    })),
  };
}

/** The credentials a URL carries (sensitive query values, userinfo), in the forms they take in JSON and HTML. */
function credentialsIn(url: string | undefined): string[] {
  if (!url) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const values = [parsed.username, parsed.password, decodeURIComponent(parsed.username), decodeURIComponent(parsed.password)];
  for (const [name, value] of parsed.searchParams) if (sensitiveQueryParameters.has(name.toLowerCase())) values.push(value);
  // Short values would match unrelated text; the URL-shaped strings still have them masked by redactUrl.
  const forms = values.filter((v) => v.length >= 4).flatMap((v) => [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1)]);
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

function maskAll(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.replaceAll(secret, REDACTED);
  return out;
}

/**
 * A run's v5 document as it is written or uploaded: every string that is a URL passes through `redactUrl`, and the
 * credentials of the analysed URL (and of the URL it ended on) are masked wherever else they appear.
 */
function redactResponse(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    const masked = maskAll(value, secrets);
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(masked) ? redactUrl(masked) : masked;
  }
  if (Array.isArray(value)) return value.map((item) => redactResponse(item, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactResponse(item, secrets)]));
  }
  return value;
}

function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 10 ? String(Math.round(value)) : String(Math.round(value * 1000) / 1000);
}

/** Scores are shown the way people read them, 0–100; audit values as they are. */
function formatValue(check: CheckResult, value: number | null): string {
  if (value === null) return '—';
  return check.kind === 'category' ? formatNumber(Math.round(value * 100)) : formatNumber(value);
}

function formatThreshold(check: CheckResult): string {
  return `${check.operator} ${check.kind === 'category' ? formatNumber(Math.round(check.threshold * 100)) : formatNumber(check.threshold)}`;
}

function renderColumns(given: string[][]): string {
  const rows = given.map((row) => row.map((cell) => terminalText(cell)));
  const widths = rows[0].map((_cell, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The table people see in a terminal, a deployment log or a failed Pulumi update. */
export function renderGateTable(result: Pick<GateResult, 'status' | 'checks' | 'aggregation' | 'runs' | 'engine' | 'strategy'>): string {
  expectObject('renderGateTable', 'result', result, 'a GateResult from runGate');
  expectArray('renderGateTable', 'result.checks', result.checks, 'an array (a GateResult from runGate)');
  const multipleUrls = new Set(result.checks.map((c) => c.url)).size > 1;
  const header = [...(multipleUrls ? ['URL'] : []), 'CHECK', 'VALUE', 'THRESHOLD', 'RESULT', 'RUNS'];
  const rows = result.checks.map((check) => [
    ...(multipleUrls ? [redactUrl(check.url)] : []),
    check.kind === 'category' ? `${check.name} score` : check.name,
    formatValue(check, check.value),
    formatThreshold(check),
    check.verdict.toUpperCase(),
    check.values.map((v) => formatValue(check, v)).join(' '),
  ]);
  const reasons = result.checks
    .filter((c) => c.verdict !== 'pass' && c.reason)
    .map((c) => `  ${terminalText(c.name)}: ${terminalText(redact(c.reason ?? ''))}`);
  const uniqueReasons = [...new Set(reasons)];
  const verdict = { pass: 'PASSED', fail: 'FAILED', error: 'ERROR' }[result.status];
  const warned = result.status === 'pass' && result.checks.some((c) => c.verdict === 'warn') ? ' with warnings' : '';
  const title = `Page analysis gate ${verdict}${warned} (${result.engine} engine, ${result.strategy.toLowerCase()}, ${result.runs} run${result.runs === 1 ? '' : 's'}, ${result.aggregation})`;
  return [title, renderColumns([header, ...rows]), ...(uniqueReasons.length > 0 ? ['Reasons:', ...uniqueReasons] : [])].join('\n');
}

/**
 * The checks as a Markdown table of at most `maxChars` characters (a deployment review's comment takes 1,024): the
 * verdict line first, failing and warned checks before passing ones, and the rows that do not fit counted at the end.
 */
export function renderGateMarkdown(result: Pick<GateResult, 'status' | 'checks' | 'runs' | 'engine'>, maxChars = 1024): string {
  expectObject('renderGateMarkdown', 'result', result, 'a GateResult from runGate');
  expectArray('renderGateMarkdown', 'result.checks', result.checks, 'an array (a GateResult from runGate)');
  const verdict = { pass: 'passed', fail: 'failed', error: 'could not decide' }[result.status];
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
  const order = { fail: 0, warn: 1, pass: 2 } as Record<string, number>;
  const checks = [...result.checks].sort((a, b) => (order[a.verdict] ?? 0) - (order[b.verdict] ?? 0));
  const multipleUrls = new Set(result.checks.map((c) => c.url)).size > 1;
  const head = [
    `**Page analysis gate ${verdict}** (${result.engine} engine, ${result.runs} run${result.runs === 1 ? '' : 's'})`,
    '',
    `|${multipleUrls ? ' URL |' : ''} Check | Value | Threshold | Result |`,
    `|${multipleUrls ? ' --- |' : ''} --- | --- | --- | --- |`,
  ];
  const rows = checks.map(
    (check) =>
      `|${multipleUrls ? ` ${cell(redactUrl(check.url))} |` : ''} ${cell(check.kind === 'category' ? `${check.name} score` : check.name)} | ${formatValue(check, check.value)} | ${cell(formatThreshold(check))} | ${check.verdict === 'pass' ? 'pass' : `**${check.verdict}**`} |`,
  );
  // Why a check did not pass (a page that answered 404, an audit without a value), once each, before the table.
  const reasons = [...new Set(checks.filter((c) => c.verdict !== 'pass' && c.reason).map((c) => `- ${cell(c.name)}: ${cell(redact(c.reason ?? ''))}`))].slice(
    0,
    3,
  );
  if (reasons.length > 0) head.splice(1, 0, '', ...reasons.map((r) => (r.length > 200 ? `${r.slice(0, 199)}…` : r)));
  const lines = [...head];
  for (const [index, row] of rows.entries()) {
    const rest = rows.length - index - 1;
    const tail = rest > 0 ? `\n\n… and ${rest} more check${rest === 1 ? '' : 's'}` : '';
    if ([...lines, row].join('\n').length + tail.length > maxChars) {
      lines.push('', `… and ${rows.length - index} more check${rows.length - index === 1 ? '' : 's'}`);
      break;
    }
    lines.push(row);
  }
  const text = redact(lines.join('\n'));
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/**
 * The failed checks in a few words, each in the direction of its threshold: a minimum (a score, `>=`) failing is
 * "below", a maximum (`<=`) failing is "above", a check without a value "has no value"; each name once.
 */
export function describeFailures(checks: readonly CheckResult[], verdict: 'fail' | 'warn' = 'fail'): string {
  const parts = checks
    .filter((c) => c.verdict === verdict)
    .map((c) => {
      if (c.value === null) return `${c.name} has no value`;
      const minimum = c.kind === 'category' || c.operator === '>=' || c.operator === '>';
      const strict = c.operator === '>' || c.operator === '<';
      return `${c.name} ${strict ? 'at or ' : ''}${minimum ? 'below' : 'above'} ${formatThreshold(c).replace(/^\S+ /, '')}`;
    });
  return [...new Set(parts)].join(', ');
}

/**
 * The error a gate on one page ends with when it did not pass (the PageAnalysisGate resource): a failed check is a
 * `CheckFailedError` naming the checks below threshold, an engine that could not analyse the page a `GATE_ENGINE_ERROR`;
 * both show the page URL masked as `redactUrl` does (it may carry a token) and the table.
 */
export function gateRunError(result: GateResult, url: string): GantryError {
  const table = renderGateTable(result);
  const shown = redactUrl(url);
  if (result.status === 'fail') {
    return new CheckFailedError(`page analysis gate for ${shown} failed: ${describeFailures(result.checks)}\n${table}`);
  }
  return new GantryError(`page analysis gate for ${shown} could not analyse the page\n${table}`, { code: 'GATE_ENGINE_ERROR', exitCode: ExitCode.remote });
}

/** A file-name-safe, stable name for a URL: host, path, and a short hash of the whole URL. */
export function urlSlug(url: string): string {
  const parsed = new URL(url);
  const path =
    parsed.pathname
      .replace(/^\/+|\/+$/g, '')
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .slice(0, 80) || 'root';
  const host = parsed.host.replace(/[^A-Za-z0-9.-]+/g, '_');
  const hash = createHash('sha256').update(url).digest('hex').slice(0, 8);
  return `${host}/${path}-${hash}`;
}

function timeSlug(iso: string): string {
  return iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

async function writeAtomically(path: string, content: string): Promise<void> {
  await ensureFolder(dirname(path), 'the report folder (--report)'); // one level at a time: no mkdir loop on /proc/nope
  await writeFileAtomic(path, content);
}

export interface ReportFile {
  /** Relative path, also the S3 key suffix. */
  name: string;
  contentType: string;
  content: () => string;
}

/**
 * Per URL: every run's v5 JSON and HTML, plus `report.json`/`report.html` for the representative run. Each file's
 * content is rendered (and masked) only when asked for, so a caller can hold one report at a time.
 */
export function reportFilesFor(url: UrlGateResult): ReportFile[] {
  const secrets = [...new Set([url.url, url.finalUrl, ...url.runs.map((run) => run.finalUrl)].flatMap(credentialsIn))].sort((a, b) => b.length - a.length);
  const json = (index: number) => () => JSON.stringify(redactResponse(url.responses[index], secrets), null, 2);
  const html = (index: number) => {
    const render = url.html?.[index];
    return render ? () => maskAll(render(), secrets) : undefined;
  };
  const files: ReportFile[] = [];
  url.responses.forEach((_response, index) => {
    files.push({ name: `run-${index + 1}.json`, contentType: 'application/json', content: json(index) });
    const page = html(index);
    if (page) files.push({ name: `run-${index + 1}.html`, contentType: 'text/html; charset=utf-8', content: page });
  });
  const representative = url.representativeRun;
  files.push({ name: 'report.json', contentType: 'application/json', content: json(representative) });
  const page = html(representative);
  if (page) files.push({ name: 'report.html', contentType: 'text/html; charset=utf-8', content: page });
  return files;
}

/**
 * Writes `gate.json` (the summary) and, per URL, `<host>/<path>-<hash>/run-k.json|html` and `report.json|html`
 * into `dir`. Each file is written under a temporary name and renamed into place. Returns the summary written.
 */
export async function writeLocalReports(result: GateResult, dir: string): Promise<GateSummary> {
  const extra = new Map<string, { reportFiles: string[] }>();
  for (const url of result.urls) {
    const folder = urlSlug(url.url);
    const written: string[] = [];
    for (const file of reportFilesFor(url)) {
      const path = join(dir, folder, file.name);
      await writeAtomically(path, file.content());
      written.push(path);
    }
    extra.set(url.url, { reportFiles: written });
  }
  const summary = summarize(result, extra);
  await writeAtomically(join(dir, 'gate.json'), JSON.stringify(summary, null, 2));
  return summary;
}

export interface S3Location {
  bucket: string;
  prefix: string;
}

/** `s3://bucket/prefix` → bucket and prefix (without slashes at the ends). */
export function parseS3Url(text: string): S3Location {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(text.trim());
  if (!match) throw new UsageError(`"${text}" is not an S3 location`, { hint: 'write it as s3://bucket or s3://bucket/prefix' });
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '..' || part === '.')) throw new UsageError(`"${text}": the prefix may not contain . or .. segments`);
  return { bucket: match[1], prefix };
}

export interface S3ArchiveOptions {
  /** Defaults to a client built from the environment (AWS_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, credentials chain). */
  client?: S3Client;
  /** Endpoint used for the object URLs; for S3-compatible stores. Read from the environment when absent. */
  endpoint?: string;
  region?: string;
  /** Path-style object URLs (default when an endpoint is set). */
  forcePathStyle?: boolean;
}

function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

export function objectUrl(bucket: string, key: string, options: Pick<S3ArchiveOptions, 'endpoint' | 'region' | 'forcePathStyle'>): string {
  const region = options.region ?? 'us-east-1';
  if (options.endpoint) {
    const endpoint = options.endpoint.replace(/\/+$/, '');
    if (options.forcePathStyle ?? true) return `${endpoint}/${bucket}/${encodeKey(key)}`;
    const parsed = new URL(endpoint);
    return `${parsed.protocol}//${bucket}.${parsed.host}/${encodeKey(key)}`;
  }
  return `https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`;
}

/** The key prefix of one URL's reports: `<prefix>/<host>/<path>-<hash>/<UTC time>/`. Stable for a URL and time. */
export function archiveKeyPrefix(location: S3Location, url: string, analyzedAt: string): string {
  return [location.prefix, urlSlug(url), timeSlug(analyzedAt)].filter((part) => part !== '').join('/');
}

/**
 * Uploads each URL's reports and the gate summary under stable keys; sets `reportUrl` on the result (the first
 * URL's `report.html` for local runs, else its `report.json`) and returns the summary that was uploaded.
 */
export async function archiveReportsToS3(result: GateResult, s3Url: string, options: S3ArchiveOptions = {}): Promise<GateSummary> {
  const location = parseS3Url(s3Url);
  const endpoint = options.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  const region = options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const forcePathStyle = options.forcePathStyle ?? endpoint !== undefined;
  // The S3 client loads when reports are archived, not with the library (0.4 s of CPU).
  const [{ PutObjectCommand, S3Client }, { s3ProxyConfig }] = await Promise.all([import('@aws-sdk/client-s3'), import('../http/s3-handler.js')]);
  const client = options.client ?? new S3Client({ region, forcePathStyle, ...(endpoint ? { endpoint } : {}), ...s3ProxyConfig() });
  const urlOptions = { region, forcePathStyle, ...(endpoint ? { endpoint } : {}) };
  const extra = new Map<string, { reportUrl: string }>();
  try {
    for (const url of result.urls) {
      const keyPrefix = archiveKeyPrefix(location, url.url, result.analyzedAt);
      let reportUrl = '';
      for (const file of reportFilesFor(url)) {
        const key = `${keyPrefix}/${file.name}`;
        await client.send(new PutObjectCommand({ Bucket: location.bucket, Key: key, Body: file.content(), ContentType: file.contentType }));
        if (file.name === 'report.html' || (file.name === 'report.json' && reportUrl === '')) reportUrl = objectUrl(location.bucket, key, urlOptions);
      }
      extra.set(url.url, { reportUrl });
    }
    const first = result.urls[0];
    result.reportUrl = first ? extra.get(first.url)?.reportUrl : undefined;
    const summary = summarize(result, extra);
    const summaryKey = `${archiveKeyPrefix(location, first.url, result.analyzedAt)}/gate.json`;
    await client.send(
      new PutObjectCommand({ Bucket: location.bucket, Key: summaryKey, Body: JSON.stringify(summary, null, 2), ContentType: 'application/json' }),
    );
    return summary;
  } finally {
    if (!options.client) client.destroy();
  }
}
