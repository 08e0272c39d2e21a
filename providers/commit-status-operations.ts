// The implementation behind `commitStatusOperations` (./commit-status.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import type * as pulumi from '@pulumi/pulumi';
import { commitStatusStates, createCommitStatus, maxStatusDescription, parseRepository, PlatformClient } from '../lib/platform/index.js';
import { runOnChangeOperations } from './run-on-change.js';
import type { Operations } from './serialized.js';
import { commitStatusProvider, inputKeys, type CommitStatusInputs, type CommitStatusOutputs, type CommitStatusSettings } from './commit-status.js';

/** What is wrong with the program's values (as Check picked them: nothing is taken as typed yet). */
function problems(inputs: CommitStatusInputs): pulumi.dynamic.CheckFailure[] {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  try {
    parseRepository('CommitStatus', inputs.repository);
  } catch {
    failures.push({ property: 'repository', reason: `repository must be "owner/repo", got ${JSON.stringify(inputs.repository) ?? 'nothing'}` });
  }
  if (typeof inputs.sha !== 'string' || !/^[0-9a-fA-F]{7,64}$/.test(inputs.sha)) {
    failures.push({ property: 'sha', reason: `sha must be a commit sha (7 to 64 hexadecimal digits), got ${JSON.stringify(inputs.sha) ?? 'nothing'}` });
  }
  if (typeof inputs.context !== 'string' || inputs.context.trim() === '') {
    failures.push({ property: 'context', reason: 'context must be a non-empty label such as "gantry/gate"' });
  }
  if (typeof inputs.state !== 'string' || !(commitStatusStates as readonly string[]).includes(inputs.state)) {
    failures.push({ property: 'state', reason: `state must be one of ${commitStatusStates.join(', ')}, got ${JSON.stringify(inputs.state) ?? 'nothing'}` });
  }
  if (inputs.description !== undefined) {
    if (typeof inputs.description !== 'string') failures.push({ property: 'description', reason: 'description must be a string' });
    else if ([...inputs.description].length > maxStatusDescription) {
      failures.push({
        property: 'description',
        reason: `description is ${[...inputs.description].length} characters; the platform takes at most ${maxStatusDescription}`,
      });
    }
  }
  if (inputs.targetUrl !== undefined) {
    let ok = false;
    try {
      const url = typeof inputs.targetUrl === 'string' ? new URL(inputs.targetUrl) : undefined;
      ok = url?.protocol === 'http:' || url?.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) failures.push({ property: 'targetUrl', reason: 'targetUrl must be an http(s) URL' });
  }
  return failures;
}

async function post(settings: CommitStatusSettings | undefined, inputs: CommitStatusInputs): Promise<CommitStatusOutputs> {
  // The token comes from the plugin's environment (the client reads GANTRY_PLATFORM_TOKEN, then PLATFORM_TOKEN).
  const baseUrl = process.env.PLATFORM_API_URL || settings?.platformApiUrl;
  const client = new PlatformClient(baseUrl ? { baseUrl } : {});
  try {
    const status = await createCommitStatus(client, inputs);
    const { owner, repo } = parseRepository('CommitStatus', inputs.repository);
    const url = status.id === undefined ? null : `${client.baseUrl}/repos/${owner}/${repo}/statuses/${inputs.sha}`;
    return { ...inputs, statusId: status.id ?? null, url, createdAt: status.createdAt ?? null };
  } finally {
    client.close();
  }
}

// Statuses are append-only: an update posts a new status (the resource keeps its first id).
export const commitStatusOperations = runOnChangeOperations({
  keys: inputKeys,
  // A value not known yet (the gate's verdict in a preview) is checked once known.
  problems,
  run: post,
  idOf: (outs) => (outs.statusId === null ? `commitstatus-${Date.now()}` : String(outs.statusId)),
}) satisfies Operations<typeof commitStatusProvider, CommitStatusInputs, CommitStatusOutputs>;
