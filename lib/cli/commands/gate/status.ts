// `gantry gate … --commit-status <owner/repo>@<sha>`: the gate's verdict as a commit status on the platform —
// pending while it runs, then success, failure, or error when the engine could not judge. Everything is checked before
// the gate runs (exit 2); lib/platform is loaded only when the flag is given.
import type { GateResult } from '../../../analysis/index.js';
import { redact } from '../../../redact.js';
import { usage, type CliContext } from '../../context.js';
import { checkStatusFlags, parseStatusTarget, platformClientFor } from '../platform/client.js';

export interface GateStatusFlags {
  commitStatus?: string;
  statusContext?: string;
  statusTargetUrl?: string;
}

export const GATE_STATUS_CONTEXT = 'gantry/gate';
const MAX_DESCRIPTION = 140;

export interface GateStatusReporter {
  /** `pending` before the gate runs; a failure to post ends the command before anything is analysed. */
  pending(): Promise<void>;
  /** The verdict: success, failure, or error; returns what was posted. */
  verdict(result: GateResult): Promise<{ state: string; description: string }>;
  /** The gate threw before a verdict: `error` is posted (a failure to post it is only noted). */
  failed(error: unknown): Promise<void>;
}

/** At most 140 characters (the platform's limit), cut with an ellipsis. */
export function shortDescription(text: string): string {
  const chars = [...redact(text).replace(/\s+/g, ' ').trim()];
  return chars.length <= MAX_DESCRIPTION ? chars.join('') : `${chars.slice(0, MAX_DESCRIPTION - 1).join('')}…`;
}

function format(value: number | null, kind: string): string {
  if (value === null) return 'no value';
  return kind === 'category' ? value.toFixed(2) : String(Math.round(value * 100) / 100);
}

/** The verdict in a line: what passed with its values, what failed and why, or why nothing could be judged. */
export function describeVerdict(
  result: GateResult,
  describeFailures: (checks: GateResult['checks']) => string,
): { state: 'success' | 'failure' | 'error'; description: string } {
  const pages = new Set(result.urls.map((u) => u.url)).size;
  const where = `${pages} page${pages === 1 ? '' : 's'}`;
  if (result.status === 'pass') {
    const shown = result.checks
      .filter((c) => c.verdict !== 'error')
      .slice(0, 6)
      .map((c) => `${c.name} ${format(c.value, c.kind)}`);
    return { state: 'success', description: shortDescription(`passed on ${where}: ${shown.join(', ')}`) };
  }
  if (result.status === 'fail') return { state: 'failure', description: shortDescription(`failed on ${where}: ${describeFailures(result.checks)}`) };
  const reason = result.checks.find((c) => c.verdict === 'error')?.reason ?? 'the engine could not analyse the page';
  return { state: 'error', description: shortDescription(`could not analyse: ${reason}`) };
}

/** Checks the flags (exit 2) and builds the client; undefined without --commit-status. */
export async function gateStatusReporter(flags: GateStatusFlags, context: CliContext): Promise<GateStatusReporter | undefined> {
  if (flags.commitStatus === undefined) {
    if (flags.statusContext !== undefined || flags.statusTargetUrl !== undefined) {
      throw usage(
        `${flags.statusContext !== undefined ? '--status-context' : '--status-target-url'} is for the commit status, and --commit-status is not given`,
        'add --commit-status <owner/repo>@<sha>',
      );
    }
    return undefined;
  }
  const target = parseStatusTarget('--commit-status', flags.commitStatus);
  const statusContext = flags.statusContext ?? GATE_STATUS_CONTEXT;
  checkStatusFlags(
    { context: statusContext, ...(flags.statusTargetUrl !== undefined ? { targetUrl: flags.statusTargetUrl } : {}) },
    { context: '--status-context', description: 'the description', targetUrl: '--status-target-url' },
  );
  const { client, close } = await platformClientFor(undefined, context.logger);
  const { describeFailures } = await import('../../../analysis/index.js');
  const post = async (state: 'pending' | 'success' | 'failure' | 'error', description: string) => {
    await client.createCommitStatus({
      ...target,
      state,
      context: statusContext,
      description: shortDescription(description),
      ...(flags.statusTargetUrl !== undefined ? { targetUrl: flags.statusTargetUrl } : {}),
    });
    context.logger.info(`commit status ${state} (${statusContext}) set on ${target.repository}@${target.sha.slice(0, 12)}`);
  };
  return {
    async pending() {
      try {
        await post('pending', 'the gate is running');
      } catch (error) {
        close();
        throw error;
      }
    },
    async verdict(result) {
      const { state, description } = describeVerdict(result, (checks) => describeFailures(checks));
      try {
        await post(state, description);
      } finally {
        close();
      }
      return { state, description };
    },
    async failed(error) {
      try {
        // The reason without addresses: a request's URL would take the 140 characters the reason needs.
        const reason = (error instanceof Error ? error.message : String(error)).replace(/(?:\b[A-Z]{3,7} )?https?:\/\/\S+/g, '');
        await post('error', `could not analyse: ${reason}`);
      } catch (postError) {
        context.out.note(`warning: the commit status could not be set to error: ${postError instanceof Error ? postError.message : String(postError)}`);
      } finally {
        close();
      }
    },
  };
}
