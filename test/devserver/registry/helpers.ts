// Shared fixtures for the registry conformance tests. The client here is Node's fetch on purpose:
// these tests check the server against the spec, not against lib/registry.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export async function tempDir(label: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `gantry-registry-${label}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes one version folder with the given files (relative path → content). */
export async function writeVersion(root: string, address: string, version: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(root, ...address.split('/'), version);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
  return dir;
}

export async function writeModuleJson(root: string, address: string, metadata: unknown): Promise<void> {
  const dir = path.join(root, ...address.split('/'));
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'module.json'), typeof metadata === 'string' ? metadata : JSON.stringify(metadata));
}

export interface JsonResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** GET without following redirects; parses JSON when the server says it is JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
export async function get<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('application/json');
  return { status: response.status, headers: response.headers, body: (json && text ? JSON.parse(text) : undefined) as T, text };
}

export const RFC3339_FRACTIONAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+(Z|[+-]\d{2}:\d{2})$/;

export const MAIN_TF = `terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}

variable "name" {
  description = "Name of the thing"
  type        = string
}

variable "size" {
  description = "How big"
  default     = 3
}

resource "aws_s3_bucket" "this" {
  bucket = var.name # not a "string" in a comment
}

module "labels" {
  source  = "cloudposse/label/null"
  version = "0.25.0"
}

output "arn" {
  description = "ARN of the bucket"
  value       = aws_s3_bucket.this.arn
}
`;
