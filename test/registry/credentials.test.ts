import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegistryServer } from '../../devserver/registry/index.js';
import { ExitCode } from '../../lib/errors.js';
import { redact } from '../../lib/http/index.js';
import { parseModuleAddress } from '../../lib/registry/address.js';
import { CliConfigError, parseCliConfigCredentials } from '../../lib/registry/cliconfig.js';
import { RegistryClient } from '../../lib/registry/client.js';
import { fastRegistryPolicy, startRegistry, writeModules } from './fixtures.js';

describe('registry: Terraform CLI credentials (credentials blocks of TF_CLI_CONFIG_FILE, ~/.terraformrc, ~/.terraform.d)', function () {
  this.timeout(30_000);
  let dir: string;
  let secured: RegistryServer;
  const token = 'cli-config-token-4711';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-cliconfig-'));
    await writeModules(join(dir, 'modules'), [{ namespace: 'acme', name: 'network', provider: 'aws', versions: ['1.0.0'] }]);
    secured = await startRegistry(join(dir, 'modules'), { token });
  });
  after(async () => {
    await secured?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function home(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(dir, 'home-'));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(root, path, '..'), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  async function authorised(env: NodeJS.ProcessEnv): Promise<boolean> {
    const client = new RegistryClient({ env, retry: fastRegistryPolicy });
    try {
      secured.clearRequests();
      await client.versions(parseModuleAddress(`${secured.host}/acme/network/aws`, {}));
      return secured
        .requests()
        .filter((r) => r.path.endsWith('/versions'))
        .every((r) => r.authorization === 'valid');
    } catch {
      return false;
    } finally {
      client.close();
    }
  }

  it('a credentials block of ~/.terraformrc (HCL, with comments, heredocs and other blocks around it) is sent to that host', async () => {
    const HOME = await home({
      '.terraformrc': `# Terraform CLI configuration
plugin_cache_dir   = "$HOME/.terraform.d/plugin-cache"
disable_checkpoint = true
/* a block comment
   over lines */
provider_installation {
  network_mirror { url = "https://mirror.example.com/" }
  direct { exclude = ["example.com/*/*"] }
}
host "example.com" {
  services = { "modules.v1" = "https://example.com/modules/" }
}
credentials "${secured.host}" {
  token = "${token}" // the dev registry's
}
note = <<EOT
  credentials "not.a.block" { token = "x" }
EOT
`,
    });
    assert.equal(await authorised({ HOME }), true);
    assert.equal(redact(`sent ${token}`).includes(token), false, 'the token is registered with the redactor');
  });

  it("TF_CLI_CONFIG_FILE (JSON content, as Terraform's parser also reads) replaces ~/.terraformrc, and ~/.terraform.d is then not read", async () => {
    const HOME = await home({
      '.terraformrc': `credentials "${secured.host}" { token = "not-this-token-0002" }`,
      '.terraform.d/credentials.tfrc.json': JSON.stringify({ credentials: { [secured.host]: { token: 'wrong-too' } } }),
      'ci.tfrc': JSON.stringify({ credentials: { [secured.host]: { token } } }),
    });
    assert.equal(await authorised({ HOME, TF_CLI_CONFIG_FILE: join(HOME, 'ci.tfrc') }), true);
    assert.equal(await authorised({ HOME, TERRAFORM_CONFIG: join(HOME, 'ci.tfrc') }), true, 'the older variable too');
    assert.equal(await authorised({ HOME }), false, 'without the variable, the folder wins over ~/.terraformrc (both wrong here)');
  });

  it('~/.terraform.d/credentials.tfrc.json (terraform login) wins over ~/.terraformrc; TF_TOKEN_ and GANTRY_TOKEN_ win over both', async () => {
    const HOME = await home({
      '.terraformrc': `credentials "${secured.host}" {\n  token = "stale"\n}\n`,
      '.terraform.d/credentials.tfrc.json': JSON.stringify({ credentials: { [secured.host]: { token } } }, null, 2),
    });
    assert.equal(await authorised({ HOME }), true);
    const variable = `TF_TOKEN_${secured.host.replace(/:\d+$/, '').replace(/\./g, '_')}`;
    assert.equal(await authorised({ HOME, [variable]: 'from-env-and-wrong' }), false, 'the variable comes first, as in Terraform');
    const swapped = await home({ '.terraform.d/credentials.tfrc.json': JSON.stringify({ credentials: { [secured.host]: { token: 'not-this-token-0001' } } }) });
    assert.equal(await authorised({ HOME: swapped, [variable]: token }), true);
  });

  it('a block for the host without its port does not apply to another port (exact host, as Terraform); terraformConfig: false reads nothing', async () => {
    const bare = secured.host.replace(/:\d+$/, '');
    const HOME = await home({ '.terraformrc': `credentials "${bare}" { token = "${token}" }` });
    assert.equal(await authorised({ HOME }), false);
    const exact = await home({ '.terraformrc': `credentials "${secured.host}" { token = "${token}" }` });
    const client = new RegistryClient({ env: { HOME: exact }, terraformConfig: false });
    assert.equal(client.tokens.tokenFor(secured.host), undefined);
    client.close();
  });

  it('a malformed file is a usage error naming the file and line, never quoting the token', async () => {
    const cases: Array<[string, RegExp]> = [
      [`credentials "r.example.com" {\n  token = "sekret-unclosed\n}\n`, /:2: a string is never closed/],
      [`# ok\ncredentials "r.example.com" {\n  token = "sekret-block-open"\n`, /:4: a block opened with "\{" is never closed/],
      [`credentials "r.example.com" {\n  token "sekret-no-equals"\n}\n`, /:3: expected "=" or "\{" after "token"/],
      [`credentials "bad host!" {\n  token = "sekret-bad-host"\n}\n`, /:1: the credentials block "bad host!" has an invalid hostname/],
      [`credentials "r.example.com" {\n  tokn = "sekret-misspelt"\n}\n`, /:1: the credentials block "r\.example\.com" needs token = "<token>"/],
      [`credentials "a.example.com" "b.example.com" {\n  token = "sekret-two-labels"\n}\n`, /:1: a credentials block takes exactly one host name/],
      [`{"credentials": {"r.example.com": {"token": "sekret-json"}},}x`, /:1: unexpected a bare word after the closing/],
      [`credentials "r.example.com" {\n  token = sekret-bare\n}\n`, /:2: the credentials block "r\.example\.com" needs token/],
    ];
    for (const [text, expected] of cases) {
      assert.throws(
        () => parseCliConfigCredentials(text, '/home/me/.terraformrc'),
        (error: unknown) => {
          assert.ok(error instanceof CliConfigError, String(error));
          assert.equal(error.exitCode, ExitCode.usage);
          assert.match(error.message, /^\/home\/me\/\.terraformrc:\d+: /);
          assert.match(error.message, expected);
          assert.doesNotMatch(error.message, /sekret/);
          return true;
        },
        text,
      );
    }
  });

  it('a malformed ~/.terraformrc fails the first request that needs a token, naming the file (exit 2)', async () => {
    const HOME = await home({ '.terraformrc': 'credentials "x.example.com" {\n  token = "sekret-x"\n' });
    const client = new RegistryClient({ env: { HOME }, retry: fastRegistryPolicy });
    await assert.rejects(client.versions(parseModuleAddress(`${secured.host}/acme/network/aws`, {})), (error: unknown) => {
      assert.ok(error instanceof CliConfigError);
      assert.ok(error.message.startsWith(join(HOME, '.terraformrc')));
      assert.doesNotMatch(error.message, /sekret/);
      return true;
    });
    client.close();
  });

  it('JSON and HCL forms read the same; the last block for a host wins; host names are normalised (case, punycode, :443)', () => {
    const hcl = parseCliConfigCredentials(
      'credentials "App.Example.COM:443" { token = "one" }\ncredentials "bücher.example" {\n  token = "two"\n}\ncredentials "app.example.com" { token = "three" }\n',
      'f',
    );
    assert.deepEqual(
      [...hcl],
      [
        ['app.example.com', 'three'],
        ['xn--bcher-kva.example', 'two'],
      ],
    );
    const json = parseCliConfigCredentials(
      JSON.stringify({ credentials: { 'App.Example.COM': { token: 'three' }, 'bücher.example': { token: 'two' } } }),
      'f.json',
    );
    assert.deepEqual([...json].sort(), [
      ['app.example.com', 'three'],
      ['xn--bcher-kva.example', 'two'],
    ]);
  });
});
