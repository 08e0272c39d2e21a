import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { DriverProcessError, WebDriverError } from '../../lib/automation/errors.js';
import { PageanalysisResponseError } from '../../lib/analysis/model.js';
import { LocalEngineError } from '../../lib/analysis/local.js';
import { PageanalysisApiError, pageanalysisErrorCodes } from '../../lib/analysis/remote.js';
import { BrowserLaunchError } from '../../lib/browser/locate.js';
import { CatalogError } from '../../devserver/registry/catalog.js';
import { CheckFailedError, ExitCode, GantryError, UsageError, exitCodeForStatus, exitCodeForSystemError } from '../../lib/errors.js';
import { HttpError, NetworkError, ProtocolError, ServiceError } from '../../lib/http/errors.js';
import { StorageError, storageErrorCodes } from '../../lib/storage/errors.js';
import { PlatformApiError, PlatformCredentialsError, PlatformRateLimitError, platformErrorCodes } from '../../lib/platform/errors.js';
import { PlatformLimitsStoreError } from '../../lib/platform/redis-store.js';
import { AddressError } from '../../lib/registry/address.js';
import { CliConfigError } from '../../lib/registry/cliconfig.js';
import { NoMatchingVersionError } from '../../lib/registry/constraints.js';
import { DiscoveryError, discoveryErrorCodes } from '../../lib/registry/discovery.js';
import { LocationError } from '../../lib/registry/location.js';
import { LockFileError } from '../../lib/registry/lockfile.js';
import { registryErrorCodes } from '../../lib/registry/errors.js';
import { sourceErrorCodes } from '../../lib/sources/errors.js';
import { cliErrorCodes } from '../../lib/cli/error-codes.js';
import {
  SecretsConfigError,
  SecretsConnectionError,
  SecretsError,
  SecretsLimitError,
  SecretsNoTokenError,
  SecretsPathError,
  secretsErrorCodes,
} from '../../lib/secrets/errors.js';
import { GitError } from '../../lib/sources/git.js';
import { SourceRefusedError } from '../../lib/sources/limits.js';
import { WebhookDeliveryError, webhookErrorCodes } from '../../lib/webhooks/errors.js';
import { WebhookQueueError } from '../../lib/webhooks/redis-queue.js';
import { RedisStoreError } from '../../lib/redis-connection.js';
import { DeviceLoginError, authErrorCodes, deviceLoginErrorCodes } from '../../lib/auth/errors.js';
import { ContextClientError, contextClientErrorCodes, mcpClientErrorCodes } from '../../lib/mcp/client/errors.js';
import { oauthAreaErrorCodes } from '../../lib/oauth/errors.js';
import { OAuthError } from '../../lib/oauth/errors.js';

// docs/architecture.md, "Exit codes": every error class under lib/ and every `new GantryError(…)` is in its table,
// and what the table says is what the code does.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

type Expected = { kind: 'fixed'; codes: number[] } | { kind: 'status' };

function parseExpected(cell: string): Expected {
  if (cell === 'by status') return { kind: 'status' };
  const codes = cell.split(/\s+or\s+/).map(Number);
  assert.ok(
    codes.every((c) => [1, 2, 3].includes(c)),
    `"${cell}" is not an exit column value`,
  );
  return { kind: 'fixed', codes };
}

/** Rows of the table under "## Exit codes": `ClassName` or `GantryError:CODE` → what it exits with. */
function documentedTable(): Map<string, Expected> {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = text.split(/^## /m).find((part) => part.startsWith('Exit codes\n'));
  assert.ok(section, 'docs/architecture.md has an "Exit codes" section');
  const rows = new Map<string, Expected>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || !cells[1]!.startsWith('`')) continue;
    const names = [...cells[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const expected = parseExpected(cells[2]!);
    if (names[0] === 'GantryError' && names.length === 2) rows.set(`GantryError:${names[1]}`, expected);
    else for (const name of names) rows.set(name, expected);
  }
  return rows;
}

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir)).sort()) {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) out.push(...listTs(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

interface Construction {
  file: string;
  line: number;
  className: string;
  code: string | undefined;
  exitCode: string | undefined;
}

/** Every error class declared under lib/ and devserver/ (extending GantryError, transitively) and every construction with options. */
/** Every string literal given as a `code:` (in the value's expression, as `a ? 'X' : 'Y'`) under lib/, providers/ and devserver/. */
function codeLiterals(): { code: string; where: string }[] {
  const found: { code: string; where: string }[] = [];
  for (const file of [...listTs('lib'), ...listTs('providers'), ...listTs('devserver')]) {
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const literals = (node: ts.Node): void => {
      if (ts.isStringLiteralLike(node) && /^[A-Z][A-Z0-9_]+$/.test(node.text)) {
        found.push({ code: node.text, where: `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}` });
      }
      ts.forEachChild(node, literals);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'code') literals(node.initializer);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function scanCode(): { classes: Map<string, string>; constructions: Construction[] } {
  const parents = new Map<string, { parent: string; file: string }>();
  const constructions: Construction[] = [];
  for (const file of [...listTs('lib'), ...listTs('devserver')]) {
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node) && node.name) {
        const extendsClause = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
        if (extendsClause) parents.set(node.name.text, { parent: extendsClause.expression.getText(source), file });
      }
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
        const options = node.arguments?.find(ts.isObjectLiteralExpression);
        const property = (name: string) =>
          options?.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(source) === name)?.initializer;
        // `code: 'X' satisfies AreaErrorCode` is the literal, checked against the area's catalogue by the compiler.
        const given = property('code');
        const code = given && ts.isSatisfiesExpression(given) ? given.expression : given;
        constructions.push({
          file,
          line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
          className: node.expression.text,
          code: code && ts.isStringLiteralLike(code) ? code.text : undefined,
          exitCode: property('exitCode')?.getText(source),
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const classes = new Map<string, string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [name, { parent, file }] of parents) {
      if (!classes.has(name) && (parent === 'GantryError' || classes.has(parent))) {
        classes.set(name, file);
        grew = true;
      }
    }
  }
  return { classes, constructions: constructions.filter((c) => c.className === 'GantryError' || classes.has(c.className)) };
}

/** The exit codes an `exitCode:` expression in the code can produce. */
function codesOf(expression: string): Expected {
  if (/exitCodeForStatus\(/.test(expression)) return { kind: 'status' };
  const named: Record<string, number> = { 'ExitCode.checkFailed': 1, 'ExitCode.usage': 2, 'ExitCode.remote': 3 };
  const found = [...expression.matchAll(/ExitCode\.\w+|\b[0-3]\b/g)].map((m) => named[m[0]] ?? Number(m[0]));
  assert.ok(found.length > 0, `cannot tell the exit code of \`${expression}\``);
  return { kind: 'fixed', codes: [...new Set(found)] };
}

function allowed(expected: Expected, actual: Expected): boolean {
  if (expected.kind === 'status') return actual.kind === 'status' || actual.codes.every((c) => c === 1 || c === 3);
  return actual.kind === 'fixed' && actual.codes.every((c) => expected.codes.includes(c));
}

const http = (status: number) => new HttpError({ status, method: 'GET', url: 'https://registry.example/v1/x' });

/** One or more instances of each class, as the code raises them; a class that is new here needs its entry. */
const examples: Record<string, (status: number) => GantryError | GantryError[]> = {
  CheckFailedError: () => new CheckFailedError('hash mismatch'),
  UsageError: () => new UsageError('bad flag'),
  NoMatchingVersionError: () => new NoMatchingVersionError('no version matches ~> 9.0'),
  SourceRefusedError: () => new SourceRefusedError('checksum mismatch'),
  AddressError: () => new AddressError('not an address'),
  CatalogError: () => new CatalogError('bad catalogue'),
  LockFileError: () => new LockFileError('bad lock'),
  CliConfigError: () => new CliConfigError('/home/u/.terraformrc', 3, 'a credentials block without a host'),
  SecretsPathError: () => new SecretsPathError('a segment is ..', 'a/../b'),
  SecretsLimitError: () => new SecretsLimitError('max_request_size', 10, 11, 'the body'),
  SecretsNoTokenError: () => new SecretsNoTokenError('secret/app'),
  SecretsConfigError: () => new SecretsConfigError('bad address'),
  BrowserLaunchError: () => [new BrowserLaunchError('no Chromium found'), new BrowserLaunchError('Chromium exited before it was ready', { started: true })],
  DiscoveryError: () => [
    new DiscoveryError('discovery failed', { code: 'DISCOVERY_FAILED' }),
    new DiscoveryError('no registry', { code: 'NO_MODULE_REGISTRY' }),
  ],
  HttpError: (status) => http(status),
  ServiceError: (status) => new ServiceError({ status, method: 'GET', url: 'https://service.example/v1/x' }, { said: ': refused', code: `TEST_${status}` }, {}),
  SecretsError: (status) =>
    new SecretsError({ status, method: 'POST', path: 'secret/data/app', errors: ['check-and-set parameter did not match the current version'], warnings: [] }),
  PageanalysisApiError: (status) => new PageanalysisApiError(http(status)),
  NetworkError: () => new NetworkError({ method: 'GET', url: 'https://x.example/', errorCode: 'ECONNREFUSED', cause: new Error('refused') }),
  ProtocolError: () => new ProtocolError('not JSON'),
  SecretsConnectionError: () => new SecretsConnectionError({ method: 'GET', path: 'secret/app', attempts: 3, maybeApplied: false, detail: 'ECONNREFUSED' }),
  LocationError: () => new LocationError('bad location'),
  GitError: () => new GitError('git clone failed'),
  PageanalysisResponseError: () => new PageanalysisResponseError(['$.kind: missing'], 'the body'),
  LocalEngineError: () => new LocalEngineError('Lighthouse failed'),
  WebDriverError: () => new WebDriverError({ status: 500, code: 'unknown error', remoteMessage: 'crashed', method: 'POST', path: '/session' }),
  DriverProcessError: () => new DriverProcessError('chromedriver exited'),
  StorageError: (status) =>
    new StorageError({
      status,
      method: 'GET',
      url: 'https://storage.example/storage/v2/files/x',
      body: { error: { code: status, message: 'Not Found', errors: [{ domain: 'global', reason: 'notFound', message: 'Not Found' }] } },
    }),
  PlatformApiError: (status) =>
    new PlatformApiError({
      status,
      method: 'GET',
      url: 'https://api.platform.example/repos/o/r',
      body: { message: 'Not Found', documentation_url: 'https://docs.platform.example/rest' },
    }),
  PlatformCredentialsError: () =>
    new PlatformCredentialsError({ method: 'GET', url: 'https://api.platform.example/user', body: { message: 'Bad credentials' } }),
  PlatformRateLimitError: () => [
    new PlatformRateLimitError({
      kind: 'secondary',
      method: 'POST',
      url: 'https://api.platform.example/repos/o/r/issues',
      status: 403,
      waitedMs: 420_000,
      attempts: 4,
      reason: '3 retries spent',
    }),
  ],
  PlatformLimitsStoreError: () => [
    new PlatformLimitsStoreError('the limits store redis://127.0.0.1:6379 is unavailable: connect ECONNREFUSED; the request was not sent'),
  ],
  WebhookDeliveryError: () => [
    new WebhookDeliveryError({ reason: 'signature-mismatch', message: 'X-Hub-Signature-256 does not match the body with the secret' }),
    new WebhookDeliveryError({ reason: 'payload-too-large', message: 'the body passed the 25 MiB cap' }),
    new WebhookDeliveryError({ reason: 'aborted', message: 'the sender closed the connection after 10 of 100 bytes of the body' }),
  ],
  ContextClientError: () => [
    new ContextClientError('the metadata names another issuer', { code: 'CTX_ISSUER_MISMATCH' }),
    new ContextClientError('the token endpoint failed', { code: 'CTX_TOKEN_ERROR', exitCode: ExitCode.remote }),
  ],
  DeviceLoginError: () => [
    new DeviceLoginError('access was denied on the approval page', { code: 'AUTH_ACCESS_DENIED' }),
    new DeviceLoginError('the quota for this client id is used up', { code: 'AUTH_QUOTA', exitCode: ExitCode.remote }),
  ],
  // The base of the two above: each face's code decides, unless the raising site passes the server's verdict.
  OAuthFlowError: () => [
    new DeviceLoginError('the code expired', { code: 'AUTH_EXPIRED' }),
    new ContextClientError('the authorization server failed', { code: 'CTX_TOKEN_ERROR', exitCode: ExitCode.remote }),
  ],
  RedisStoreError: () => [
    new RedisStoreError('the store redis://127.0.0.1:6379 is unavailable: connect ECONNREFUSED', { code: 'REDIS_STORE', hint: 'start it' }),
  ],
  OAuthError: (status) => new OAuthError('the token endpoint answered', { code: 'OAUTH_ERROR_RESPONSE', status, error: 'invalid_grant' }),
  WebhookQueueError: () => [
    new WebhookQueueError('the webhook queue redis://127.0.0.1:6379/0 is unavailable: connect ECONNREFUSED; the delivery was not queued'),
  ],
};

describe('exit codes: docs/architecture.md "Exit codes" against the code', () => {
  const table = documentedTable();
  const { classes, constructions } = scanCode();

  it('every error class under lib/ is in the table, and the table names no class that does not exist', () => {
    const missing = [...classes.keys()].filter((name) => !table.has(name)).map((name) => `${name} (${classes.get(name)})`);
    assert.deepEqual(missing, [], 'error classes missing from the table');
    const stale = [...table.keys()].filter((name) => !name.startsWith('GantryError:') && !classes.has(name));
    assert.deepEqual(stale, [], 'the table names classes the code no longer has');
  });

  it('every `new GantryError(…)` has a code in the table and an exit code the table allows', () => {
    const direct = constructions.filter((c) => c.className === 'GantryError');
    assert.ok(direct.length > 0, 'the scan finds direct constructions');
    for (const c of direct) {
      const where = `${c.file}:${c.line}`;
      assert.ok(c.code !== undefined, `${where}: a direct GantryError needs a literal code`);
      const expected = table.get(`GantryError:${c.code}`);
      assert.ok(expected, `${where}: code ${c.code} is not in the table`);
      assert.ok(c.exitCode !== undefined, `${where}: no exitCode`);
      assert.ok(allowed(expected, codesOf(c.exitCode)), `${where}: exitCode \`${c.exitCode}\` is not what the table says for ${c.code}`);
    }
    const codes = new Set(direct.map((c) => `GantryError:${c.code}`));
    const stale = [...table.keys()].filter((name) => name.startsWith('GantryError:') && !codes.has(name));
    assert.deepEqual(stale, [], 'the table names direct codes the code no longer raises');
  });

  it('an exitCode passed when raising a class is one the table allows for it', () => {
    for (const c of constructions.filter((x) => x.className !== 'GantryError' && x.exitCode !== undefined)) {
      const expected = table.get(c.className);
      assert.ok(expected, `${c.className} is not in the table`);
      assert.ok(allowed(expected, codesOf(c.exitCode!)), `${c.file}:${c.line}: ${c.className} raised with \`${c.exitCode}\``);
    }
  });

  it('each class\'s instances exit as the table says; "by status" is 1 for a 4xx but 408 and 429, else 3', () => {
    for (const name of classes.keys()) {
      const example = examples[name];
      assert.ok(example, `the test has no example of ${name}: add one to \`examples\``);
      const expected = table.get(name)!;
      if (expected.kind === 'status') {
        for (const [status, code] of [
          [400, 1],
          [403, 1],
          [404, 1],
          [409, 1],
          [422, 1],
          [408, 3],
          [429, 3],
          [500, 3],
          [502, 3],
          [503, 3],
        ] as const) {
          const instance = example(status) as GantryError;
          assert.equal(instance.exitCode, code, `${name} for ${status}`);
        }
      } else {
        const instances = [example(0)].flat();
        const seen = new Set(instances.map((i) => i.exitCode));
        assert.deepEqual([...seen].sort(), [...expected.codes].sort(), `${name}'s examples exit ${[...seen].join(', ')}`);
      }
    }
  });

  it('exitCodeForStatus and exitCodeForSystemError: a file the user named that cannot be used is 2, a refused connection 3', () => {
    assert.equal(exitCodeForStatus(404), ExitCode.checkFailed);
    assert.equal(exitCodeForStatus(429), ExitCode.remote);
    const eisdir = Object.assign(new Error('EISDIR: illegal operation on a directory, read'), { code: 'EISDIR', syscall: 'read' });
    assert.equal(exitCodeForSystemError(eisdir), ExitCode.usage);
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' });
    assert.equal(exitCodeForSystemError(refused), ExitCode.remote);
    assert.equal(exitCodeForSystemError(new TypeError('a bug')), ExitCode.remote);
  });

  it('SEC-STATUS-412, SEC-STATUS-472, SEC-STATUS-473: the secrets service\'s own "not now" statuses exit 3 after their retries', () => {
    for (const status of [412, 472, 473]) {
      const error = new SecretsError({ status, method: 'GET', path: 'secret/data/app', errors: [], warnings: [] });
      assert.equal(error.exitCode, ExitCode.remote, String(status));
    }
  });

  it('LAYER-ERRORS: every `code:` an area raises is in its `as const` catalogue, and each code of a class with several outcomes exits as the table allows', () => {
    const catalogues: { area: string; prefix: RegExp; codes: readonly string[]; byStatus?: RegExp }[] = [
      { area: 'secrets', prefix: /^SECRETS_/, codes: secretsErrorCodes },
      { area: 'platform', prefix: /^PLATFORM_/, codes: platformErrorCodes, byStatus: /^PLATFORM_\d{3}$/ },
      { area: 'storage', prefix: /^STORAGE_/, codes: storageErrorCodes },
      { area: 'analysis (page analysis API)', prefix: /^PAGEANALYSIS_/, codes: pageanalysisErrorCodes, byStatus: /^PAGEANALYSIS_\d{3}$/ },
      { area: 'auth', prefix: /^AUTH_/, codes: authErrorCodes },
      { area: 'mcp client', prefix: /^CTX_/, codes: mcpClientErrorCodes },
      { area: 'registry discovery', prefix: /^(?:DISCOVERY_|NO_MODULE_REGISTRY$)/, codes: Object.keys(discoveryErrorCodes) },
      { area: 'webhooks', prefix: /^WEBHOOK_/, codes: webhookErrorCodes },
      { area: 'oauth', prefix: /^OAUTH_/, codes: oauthAreaErrorCodes },
    ];
    const literals = codeLiterals();
    for (const { area, prefix, codes, byStatus } of catalogues) {
      const raised = literals.filter((l) => prefix.test(l.code));
      assert.ok(raised.length > 0, `the scan finds the ${area} codes`);
      const outside = raised.filter((l) => !codes.includes(l.code) && !byStatus?.test(l.code)).map((l) => `${l.code} (${l.where})`);
      assert.deepEqual(outside, [], `codes missing from the ${area} catalogue`);
      assert.equal(new Set(codes).size, codes.length, `the ${area} catalogue lists each code once`);
    }
    for (const [name, catalogue, raise] of [
      ['DeviceLoginError', deviceLoginErrorCodes, (code: string) => new DeviceLoginError('x', { code: code as keyof typeof deviceLoginErrorCodes })],
      ['ContextClientError', contextClientErrorCodes, (code: string) => new ContextClientError('x', { code: code as keyof typeof contextClientErrorCodes })],
      ['DiscoveryError', discoveryErrorCodes, (code: string) => new DiscoveryError('x', { code: code as keyof typeof discoveryErrorCodes })],
    ] as const) {
      const expected = table.get(name)!;
      for (const [code, exit] of Object.entries(catalogue) as [string, number][]) {
        assert.ok(allowed(expected, { kind: 'fixed', codes: [exit] }), `${name} ${code} exits ${exit}, which the table does not allow`);
        assert.equal(raise(code).exitCode, exit, `${name} raised with ${code} alone exits as its catalogue says`);
      }
    }
  });

  it('LAYER-ERRORS: the registry, sources and the command raise only catalogued codes, and each code of their catalogues is raised', () => {
    const literals = codeLiterals();
    const everyCatalogue = new Set<string>([
      ...secretsErrorCodes,
      ...platformErrorCodes,
      ...storageErrorCodes,
      ...pageanalysisErrorCodes,
      ...authErrorCodes,
      ...mcpClientErrorCodes,
      ...Object.keys(discoveryErrorCodes),
      ...webhookErrorCodes,
      ...registryErrorCodes,
      ...sourceErrorCodes,
      ...cliErrorCodes,
    ]);
    // A folder's codes are its catalogue's; the command also raises the codes of the areas it speaks for
    // (STORAGE_NOT_A_FILE …), which their catalogues hold.
    for (const [folder, own, others] of [
      ['lib/registry/', [...registryErrorCodes, ...Object.keys(discoveryErrorCodes)], false],
      ['lib/sources/', sourceErrorCodes, false],
      ['lib/cli/', cliErrorCodes, true],
    ] as const) {
      const raised = literals.filter((l) => l.where.startsWith(folder));
      assert.ok(raised.length > 0, `the scan finds the codes of ${folder}`);
      const outside = raised.filter((l) => !(own as readonly string[]).includes(l.code) && !(others && everyCatalogue.has(l.code)));
      assert.deepEqual(
        outside.map((l) => `${l.code} (${l.where})`),
        [],
        `codes of ${folder} missing from its catalogue`,
      );
      assert.equal(new Set(own).size, own.length, `the ${folder} catalogue lists each code once`);
    }
    for (const code of [...registryErrorCodes, ...sourceErrorCodes, ...cliErrorCodes, ...webhookErrorCodes]) {
      assert.ok(
        literals.some((l) => l.code === code),
        `${code} is catalogued but nothing raises it`,
      );
    }
  });
});
