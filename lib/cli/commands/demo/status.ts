import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runningServer, type DemoStep } from './step.js';

const REPOSITORY = 'gantry/demo';
const CONTEXT = 'gantry/gate';

/** A commit sha standing for the demo site: the SHA-1 of its files, so the same site gets the same commit. */
async function siteSha(examplesDir: string): Promise<string> {
  const folder = join(examplesDir, 'site');
  const hash = createHash('sha1');
  for (const name of (await readdir(folder)).sort())
    hash
      .update(name)
      .update('\0')
      .update(await readFile(join(folder, name)))
      .update('\0');
  return hash.digest('hex');
}

/**
 * Post the demo gate's verdict as a commit status to the embedded platform API, through PlatformClient with the
 * workflow token `gantry dev` hands out for gantry/demo (as a pipeline would), and read it back with the combined state.
 */
export const commitStatusStep: DemoStep = {
  name: 'commit-status',
  description: "post the gate's verdict as a commit status to the embedded platform API and read it back",
  async run({ servers, out, examplesDir, json, results }) {
    const server = runningServer(servers, 'platform', 'the embedded platform API');
    const { PlatformApp, PlatformClient } = await import('../../../platform/index.js');
    const { shortDescription } = await import('../gate/status.js');
    const gate = results?.gate as { status?: string; scores?: Record<string, number | null>; error?: string } | undefined;
    const state = gate?.status === 'pass' ? 'success' : gate?.status === 'fail' || gate?.error?.includes('did not pass') ? 'failure' : 'error';
    const scores = Object.entries(gate?.scores ?? {})
      .map(([name, score]) => `${name} ${score === null ? '-' : Number(score).toFixed(2)}`)
      .join(', ');
    const description = shortDescription(
      state === 'success'
        ? `passed on 1 page: ${scores}`
        : state === 'failure'
          ? `failed: ${gate?.error ?? 'below a threshold'}`
          : `could not analyse: ${gate?.error ?? 'the gate did not run'}`,
    );
    const sha = await siteSha(examplesDir);
    const client = new PlatformClient({ baseUrl: server.url, token: server.credentials.workflowToken!, identity: { kind: 'workflow' }, env: {}, proxy: {} });
    try {
      const posted = await client.createCommitStatus({ repository: REPOSITORY, sha, state, context: CONTEXT, description });
      const read = await client.listCommitStatuses({ repository: REPOSITORY, ref: sha });
      const combined = (
        await client.request<{ state?: string }>('GET', '/repos/{owner}/{repo}/commits/{ref}/status', { params: { owner: 'gantry', repo: 'demo', ref: sha } })
      ).body.state;
      const mine = read.find((s) => s.id === posted.id);
      if (!mine || mine.state !== state || mine.context !== CONTEXT || mine.description !== description) {
        throw new Error(`the status read back from ${REPOSITORY}@${sha.slice(0, 12)} is not the one posted`);
      }
      // The same status as an app installation sees it: a token from the app's private key (as webhook handlers act).
      const { appId, installationId, appPrivateKeyFile } = server.credentials;
      const app = new PlatformApp({ baseUrl: server.url, appId: appId!, privateKeyFile: appPrivateKeyFile!, env: {}, proxy: {} });
      let seenByApp: string | undefined;
      try {
        seenByApp = (await app.clientFor(installationId!).listCommitStatuses({ repository: REPOSITORY, ref: sha })).find((s) => s.id === posted.id)?.state;
      } finally {
        app.close();
      }
      if (seenByApp !== state)
        throw new Error(`app ${appId}'s installation ${installationId} does not see the status posted on ${REPOSITORY}@${sha.slice(0, 12)}`);
      const violations = (await (await fetch(new URL('/_gantry/violations', server.url))).json()) as { total?: number };
      const budgets = await client.budgets();
      const core = budgets.kept.resources.core;
      if (!json) {
        out.line(`  posted ${state} for ${CONTEXT} on ${REPOSITORY}@${sha.slice(0, 12)} (as the repository's workflow token): ${description}`);
        out.line(`  read it back: ${mine.state} ${mine.context} by ${mine.creator ?? 'the workflow'}; the commit's combined state is ${combined}`);
        out.line(
          `  app ${appId}'s installation ${installationId} sees it too (${seenByApp}), with a token the app's private key got (kept until a minute before it expires)`,
        );
        if (core?.remaining !== undefined)
          out.line(
            `  core budget: ${core.remaining} of ${core.limit} left this hour (x-ratelimit-* headers); limits the server saw broken: ${violations.total ?? '?'}`,
          );
        out.line(
          `  try: gantry dev, then in another terminal, paste the export line it prints and: gantry platform status ${REPOSITORY} ${sha} --state success --context ${CONTEXT} && gantry platform rate-limit`,
        );
        out.line('       (and gantry gate <url> --commit-status <owner/repo>@<sha> posts pending, then the verdict; --installation 1 acts as the app)');
      }
      return { repository: REPOSITORY, sha, context: CONTEXT, state, description, readBack: mine.state, combined, seenByApp, violations: violations.total };
    } finally {
      client.close();
    }
  },
};
