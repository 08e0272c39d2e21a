/**
 * Commit statuses: `POST /repos/{owner}/{repo}/statuses/{sha}` and reading them back
 * (`GET /repos/{owner}/{repo}/commits/{ref}/statuses`). Everything the platform would refuse is refused here first,
 * before anything is sent (a UsageError, exit 2): the state, a description over 140 characters, a target URL that is
 * no http(s) URL, a repository that is not `owner/repo`, an empty sha or context.
 */
import { UsageError } from '../errors.js';
import { expectObject, expectString } from '../arguments.js';

export const commitStatusStates = ['error', 'failure', 'pending', 'success'] as const;
export type CommitStatusState = (typeof commitStatusStates)[number];
export const maxStatusDescription = 140;

export interface CommitStatusInput {
  /** `owner/repo`. */
  repository: string;
  /** The commit: a sha (the platform also takes a branch or tag name for reading back). */
  sha: string;
  state: CommitStatusState;
  /** The label that tells this status from others on the commit (the platform's default is `default`). */
  context?: string | undefined;
  /** At most 140 characters. */
  description?: string | undefined;
  targetUrl?: string | undefined;
}

export interface CommitStatus {
  id: number | undefined;
  state: string;
  context: string;
  description: string | null;
  targetUrl: string | null;
  createdAt: string | undefined;
  updatedAt: string | undefined;
  creator: string | undefined;
}

/** What the helpers need of a client: `PlatformClient` is one. */
export interface PlatformRequester {
  request(
    method: string,
    path: string,
    options?: { body?: unknown; query?: Record<string, string | number | boolean | undefined>; params?: Record<string, string | number> },
  ): Promise<{ status: number; headers: Record<string, unknown>; body: unknown }>;
  paginate<T = unknown>(
    path: string,
    options?: { query?: Record<string, string | number | boolean | undefined>; params?: Record<string, string | number>; limit?: number },
  ): AsyncGenerator<T>;
}

/** `owner/repo` into its parts, as the platform names them (letters, digits, `-`, `_`, `.`; not `.` or `..`). */
export function parseRepository(where: string, value: unknown): { owner: string; repo: string } {
  expectString(where, 'repository', value, 'a repository as "owner/repo"');
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/.exec(value.trim());
  if (!match || match[2] === '.' || match[2] === '..') {
    throw new UsageError(`${where}: "${value.slice(0, 120)}" is not a repository; write it as owner/repo (e.g. octo-org/site)`, { code: 'INVALID_ARGUMENT' });
  }
  return { owner: match[1]!, repo: match[2]! };
}

function expectRef(where: string, name: string, value: unknown): string {
  expectString(where, name, value, 'a commit sha (or, to read, a branch or tag name)');
  if (/\s|\.\.|^\/|\/$/.test(value) || value.length > 255) {
    throw new UsageError(`${where}: ${name} "${value.slice(0, 80)}" is not a commit sha or ref`, { code: 'INVALID_ARGUMENT' });
  }
  return value;
}

/** The request body for a status, or a UsageError naming what the platform would refuse. */
export function commitStatusBody(input: unknown, where = 'createCommitStatus'): { owner: string; repo: string; sha: string; body: Record<string, string> } {
  expectObject(where, 'status', input, 'a status: { repository, sha, state, context?, description?, targetUrl? }');
  const { owner, repo } = parseRepository(where, input.repository);
  const sha = expectRef(where, 'sha', input.sha);
  const { state, context, description, targetUrl } = input;
  if (typeof state !== 'string' || !(commitStatusStates as readonly string[]).includes(state)) {
    throw new UsageError(`${where}: state must be one of ${commitStatusStates.join(', ')}, got ${JSON.stringify(state) ?? 'nothing'}`, {
      code: 'INVALID_ARGUMENT',
    });
  }
  const body: Record<string, string> = { state };
  if (context !== undefined) {
    expectString(where, 'context', context, 'a non-empty label such as "gantry/gate"');
    body.context = context;
  }
  if (description !== undefined) {
    if (typeof description !== 'string') throw new UsageError(`${where}: description must be a string`, { code: 'INVALID_ARGUMENT' });
    const length = [...description].length;
    if (length > maxStatusDescription) {
      throw new UsageError(`${where}: the description is ${length} characters; the platform takes at most ${maxStatusDescription}`, {
        code: 'INVALID_ARGUMENT',
        hint: 'shorten it, or put the details behind the target URL',
      });
    }
    body.description = description;
  }
  if (targetUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = typeof targetUrl === 'string' ? new URL(targetUrl) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError(`${where}: targetUrl must be an http(s) URL`, { code: 'INVALID_ARGUMENT' });
    }
    body.target_url = targetUrl as string;
  }
  return { owner, repo, sha, body };
}

function toStatus(raw: unknown): CommitStatus {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const creator = r.creator && typeof r.creator === 'object' ? (r.creator as Record<string, unknown>).login : undefined;
  return {
    id: typeof r.id === 'number' ? r.id : undefined,
    state: String(r.state ?? ''),
    context: String(r.context ?? 'default'),
    description: typeof r.description === 'string' ? r.description : null,
    targetUrl: typeof r.target_url === 'string' ? r.target_url : null,
    createdAt: typeof r.created_at === 'string' ? r.created_at : undefined,
    updatedAt: typeof r.updated_at === 'string' ? r.updated_at : undefined,
    creator: typeof creator === 'string' ? creator : undefined,
  };
}

function expectClient(where: string, client: unknown): asserts client is PlatformRequester {
  expectObject(where, 'client', client, 'a PlatformClient');
  if (typeof client.request !== 'function' || typeof client.paginate !== 'function') {
    throw new UsageError(`${where}: client must be a PlatformClient`, { code: 'INVALID_ARGUMENT' });
  }
}

/** Posts a commit status; checked before sending (exit 2 for anything the platform would refuse). */
export async function createCommitStatus(client: PlatformRequester, input: CommitStatusInput): Promise<CommitStatus> {
  expectClient('createCommitStatus', client);
  const { owner, repo, sha, body } = commitStatusBody(input);
  const response = await client.request('POST', '/repos/{owner}/{repo}/statuses/{sha}', { params: { owner, repo, sha }, body });
  return toStatus(response.body);
}

/** The statuses of a commit (or branch, or tag), newest first, every page. */
export async function listCommitStatuses(client: PlatformRequester, input: { repository: string; ref: string; limit?: number }): Promise<CommitStatus[]> {
  expectClient('listCommitStatuses', client);
  expectObject('listCommitStatuses', 'options', input, 'an object: { repository, ref, limit? }');
  const { owner, repo } = parseRepository('listCommitStatuses', input.repository);
  const ref = expectRef('listCommitStatuses', 'ref', input.ref);
  const statuses: CommitStatus[] = [];
  for await (const item of client.paginate('/repos/{owner}/{repo}/commits/{ref}/statuses', {
    params: { owner, repo, ref },
    query: { per_page: 100 },
    ...(input.limit !== undefined ? { limit: input.limit } : {}),
  })) {
    statuses.push(toStatus(item));
  }
  return statuses;
}
