/**
 * Deployment protection decided by a gate. On `deployment_protection_rule.requested` the environment's gate
 * (gantry.hooks.json) runs on its pages and the answer goes to the delivery's `deployment_callback_url` as the
 * delivery's installation: `{environment_name, state: approved|rejected, comment}`, the comment the table of checks
 * cut to 1,024 characters. Before the gate, a status report (a callback without `state`) says it is running; at most
 * 10 reports per deployment. No configuration for the environment, an engine error or a timeout is rejected with the
 * reason — a deployment is never left waiting for an answer that will not come.
 */
import { basename } from 'node:path';
import { createEngine, renderGateMarkdown, runGate, type AnalysisEngine, type GateResult } from '../analysis/index.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PlatformApp } from '../platform/index.js';
import { gateFor, type EnvironmentGate, type HooksConfig } from './config.js';
import type { WebhookContext, WebhookHandler } from './receiver.js';
import type { WebhookErrorCode } from './errors.js';

/** The platform's limits on a deployment review (GitHub's): a comment of 1,024 characters, 10 status reports. */
export const MAX_REVIEW_COMMENT = 1024;
export const MAX_STATUS_REPORTS = 10;

export interface ProtectionOptions {
  config: HooksConfig;
  /** The app whose installations answer (its id and private key). */
  app: PlatformApp;
  /** The engine for a gate; default `createEngine({ engine })` from the environment's configuration. */
  engineFor?: (gate: EnvironmentGate) => AnalysisEngine;
  logger?: Logger;
}

export interface ProtectionDecision {
  environment: string;
  state: 'approved' | 'rejected';
  comment: string;
  gate: GateResult | undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function cut(comment: string): string {
  return comment.length <= MAX_REVIEW_COMMENT ? comment : `${comment.slice(0, MAX_REVIEW_COMMENT - 1)}…`;
}

/** The handler for `deployment_protection_rule.requested`, with the decisions it posted passed to `onDecision`. */
export function deploymentProtection(options: ProtectionOptions, onDecision?: (decision: ProtectionDecision, context: WebhookContext) => void): WebhookHandler {
  const reports = new Map<string, number>();
  return async (context) => {
    const { payload } = context;
    const log = options.logger ?? context.log;
    const environment = text(payload.environment);
    const callback = text(payload.deployment_callback_url);
    if (!environment || !callback) {
      throw new UsageError(
        `deployment_protection_rule ${context.id}: the payload has no ${environment ? 'deployment_callback_url' : 'environment'}; there is nowhere to answer`,
        { code: 'WEBHOOK_PROTECTION_PAYLOAD' satisfies WebhookErrorCode },
      );
    }
    if (context.installationId === undefined) {
      throw new UsageError(`deployment_protection_rule ${context.id}: the payload names no installation; the answer must come from the app's installation`, {
        code: 'WEBHOOK_PROTECTION_PAYLOAD' satisfies WebhookErrorCode,
        hint: 'deployment protection rules are deliveries to an app (availability A)',
      });
    }
    const client = options.app.clientFor(context.installationId);
    const post = async (body: Record<string, string>) => {
      await client.request('POST', callback, { body: { environment_name: environment, ...body }, creates: false, signal: context.signal });
    };
    const report = async (comment: string) => {
      const sent = reports.get(callback) ?? 0;
      if (sent >= MAX_STATUS_REPORTS - 1) return; // the last one is kept for the decision's own words
      reports.set(callback, sent + 1);
      try {
        await post({ comment: cut(comment) });
      } catch (error) {
        log.warn(`deployment_protection_rule ${context.id}: the status report was refused: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    const decide = async (state: 'approved' | 'rejected', comment: string, gate: GateResult | undefined) => {
      const decision = { environment, state, comment: cut(comment), gate };
      await post({ state, comment: decision.comment });
      reports.delete(callback);
      log.info(`deployment_protection_rule ${context.id}: ${environment} ${state}${gate ? ` (gate ${gate.status})` : ''}`);
      onDecision?.(decision, context);
    };

    const gate = gateFor(options.config, environment);
    if (!gate) {
      // The file's name only: the comment is shown on the platform, the server's folders are not its business.
      await decide(
        'rejected',
        `Gantry has no gate for the environment \`${environment}\` in ${basename(options.config.source)}; add one under \`environments\` to let deployments through.`,
        undefined,
      );
      return;
    }
    await report(
      `Gantry is gating ${gate.urls.length} page${gate.urls.length === 1 ? '' : 's'} of \`${environment}\` (${gate.runs} run${gate.runs === 1 ? '' : 's'} each).`,
    );
    const timeout = AbortSignal.timeout(gate.timeoutMs);
    const signal = AbortSignal.any([context.signal, timeout]);
    let result: GateResult;
    try {
      const engine = options.engineFor ? options.engineFor(gate) : createEngine({ ...(gate.engine ? { engine: gate.engine } : {}) });
      result = await runGate({
        urls: gate.urls,
        thresholds: gate.thresholds,
        runs: gate.runs,
        ...(gate.strategy ? { strategy: gate.strategy } : {}),
        engine,
        signal,
      });
    } catch (error) {
      const reason = timeout.aborted
        ? `the gate ran longer than ${Math.round(gate.timeoutMs / 1000)} s (timeoutSeconds)`
        : `the gate could not run: ${error instanceof Error ? error.message : String(error)}`;
      await decide('rejected', `Gantry rejected the deployment: ${reason}.`, undefined);
      return;
    }
    const table = renderGateMarkdown(result, MAX_REVIEW_COMMENT);
    await decide(result.status === 'pass' ? 'approved' : 'rejected', table, result);
  };
}

/**
 * On `deployment_status` with state `success` and an `environment_url` (when `deploymentStatus.gate` is on): the
 * deployed page is gated with its environment's thresholds (the defaults when the environment has none) and the
 * verdict posted as a commit status on the deployment's sha, through the delivery's installation.
 */
export function deploymentStatusGate(options: ProtectionOptions): WebhookHandler {
  return async (context) => {
    const { payload } = context;
    const log = options.logger ?? context.log;
    if (!options.config.deploymentStatus.gate) return;
    const status = payload.deployment_status as Record<string, unknown> | undefined;
    const deployment = payload.deployment as Record<string, unknown> | undefined;
    const repository = (payload.repository as Record<string, unknown> | undefined)?.full_name;
    const url = text(status?.environment_url);
    const sha = text(deployment?.sha);
    if (status?.state !== 'success' || !url || !sha || typeof repository !== 'string' || context.installationId === undefined) return;
    const environment = text(status.environment) ?? text(deployment?.environment) ?? '';
    const gate = gateFor(options.config, environment);
    const client = options.app.clientFor(context.installationId);
    const statusContext = options.config.deploymentStatus.context;
    await client.createCommitStatus({ repository, sha, state: 'pending', context: statusContext, description: `gating ${environment || 'the deployment'}` });
    let state: 'success' | 'failure' | 'error';
    let description: string;
    try {
      const engine = options.engineFor && gate ? options.engineFor(gate) : createEngine({ ...(gate?.engine ? { engine: gate.engine } : {}) });
      const result = await runGate({
        urls: [url],
        thresholds: gate?.thresholds ?? [],
        runs: gate?.runs ?? 1,
        ...(gate?.strategy ? { strategy: gate.strategy } : {}),
        engine,
        signal: AbortSignal.any([context.signal, AbortSignal.timeout(gate?.timeoutMs ?? 600_000)]),
      });
      state = result.status === 'pass' ? 'success' : result.status === 'fail' ? 'failure' : 'error';
      description =
        result.status === 'pass' ? 'the page analysis gate passed' : `the page analysis gate ${result.status === 'fail' ? 'failed' : 'could not decide'}`;
    } catch (error) {
      state = 'error';
      description = `the gate could not run: ${error instanceof Error ? error.message : String(error)}`;
    }
    await client.createCommitStatus({
      repository,
      sha,
      state,
      context: statusContext,
      description: description.length > 140 ? `${description.slice(0, 139)}…` : description,
    });
    log.info(`deployment_status ${context.id}: ${url} gated, ${state} posted as ${statusContext} on ${repository}@${sha.slice(0, 12)}`);
  };
}
