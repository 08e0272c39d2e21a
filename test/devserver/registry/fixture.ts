// One registry folder exercising every kind of entry: version folders, ready archives, module.json metadata,
// several providers, a pre-release, a version name that is not semver and a declared external location.
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { create as createTar } from 'tar';
import yazl from 'yazl';
import { tempDir, writeModuleJson, writeVersion, MAIN_TF } from './helpers.js';

export const STORAGE_META = {
  owner: 'acme-platform',
  description: 'Object storage with replication',
  source: 'https://git.example.com/acme/terraform-aws-storage',
  verified: true,
  downloads: { week: 5, month: 20, year: 200, total: 1000 },
  versions: { '1.0.0': { published_at: '2026-01-02T03:04:05.678Z' } },
};

export async function buildFixture(): Promise<{ dir: string; remove(): Promise<void> }> {
  const temp = await tempDir('fixture');
  const root = temp.dir;
  for (const version of ['1.0.0', '1.1.0', '2.0.0-rc.1']) {
    await writeVersion(root, 'acme/storage/aws', version, {
      'main.tf': MAIN_TF,
      'README.md': `# storage ${version}\n`,
      'modules/replica/main.tf': 'variable "region" {\n  description = "Replica region"\n}\nresource "aws_s3_bucket" "replica" {}\n',
    });
  }
  await writeModuleJson(root, 'acme/storage/aws', STORAGE_META);
  await writeVersion(root, 'acme/storage/google', '0.9.0', { 'main.tf': 'resource "google_storage_bucket" "this" {}\n' });
  await writeVersion(root, 'other/storage/aws', '3.0.0', { 'main.tf': 'output "x" { value = 1 }\n' });
  await writeVersion(root, 'acme/weird/aws', '1.0.0', { 'main.tf': '' });
  await writeVersion(root, 'acme/weird/aws', 'latest-build', { 'main.tf': '' });
  await writeVersion(root, 'acme/weird/aws', 'versions', { 'main.tf': '' });
  await writeModuleJson(root, 'acme/external/aws', {
    versions: { '1.0.0': { location: 'git::https://git.example.com/acme/external.git?ref=v1.0.0', published_at: '2025-12-01T00:00:00.5Z' } },
  });

  // Ready archives: a tar.gz and a zip, served byte for byte.
  const archiveSource = await writeVersion(root, '.build', 'src', { 'main.tf': 'output "from_archive" { value = true }\n', 'README.md': '# network\n' });
  const networkDir = path.join(root, 'acme', 'network', 'aws');
  await mkdir(networkDir, { recursive: true });
  await createTar({ gzip: true, cwd: archiveSource, file: path.join(networkDir, '1.0.0.tar.gz') }, ['main.tf', 'README.md']);
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('output "from_zip" { value = true }\n'), 'main.tf');
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path.join(networkDir, '1.0.1.zip')));
  return temp;
}
