import type { Command } from 'commander';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckFailedError } from '../../../errors.js';
import type { CliContext } from '../../context.js';
import { startDevServers } from '../../serving.js';
import { modulesStep } from './modules.js';
import { secretsStep } from './secrets.js';
import { gateStep } from './gate.js';
import { browserStep } from './browser.js';
import { commitStatusStep } from './status.js';
import { deployStep } from './deploy.js';
import { loginStep } from './login.js';
import { publishStep } from './publish.js';
import { agentStep } from './agent.js';
import { SharedBrowser } from './shared-browser.js';
import type { DemoStep } from './step.js';

/** The pipeline `gantry demo` runs, in order. Each capability adds its step module here. */
const steps: DemoStep[] = [modulesStep, secretsStep, gateStep, commitStatusStep, deployStep, loginStep, publishStep, browserStep, agentStep];

export function register(program: Command, context: CliContext): void {
  program
    .command('demo')
    .description('run the example pipeline against the embedded dev servers (what `npm start` does)')
    .option('--keep', 'keep the demo work folder and print its path')
    .action(async (options: { keep?: boolean }, command: Command) => {
      const { json } = context.globals(command);
      const { out } = context;
      // The device login's approval comes within a second or two here: poll every second, not every five.
      process.env.GANTRY_DEV_OAUTH_INTERVAL ??= '1';
      const running = await startDevServers();
      const workDir = await mkdtemp(join(tmpdir(), 'gantry-demo-'));
      const results: Record<string, unknown> = {};
      const failures: string[] = [];
      const browser = new SharedBrowser();
      try {
        if (!json) {
          out.line('Gantry demo: the example pipeline against embedded dev servers on 127.0.0.1.');
          for (const server of running.servers) out.line(`  ${server.name.padEnd(14)} ${server.url}`);
        }
        const servers = new Map(running.servers.map((server) => [server.name, server]));
        for (const [index, step] of steps.entries()) {
          if (!json) out.line(`\n[${index + 1}/${steps.length}] ${step.name}: ${step.description}`);
          try {
            results[step.name] = await step.run({ servers, out, workDir, examplesDir: running.context.examplesDir, json, results, browser });
          } catch (error) {
            failures.push(step.name);
            results[step.name] = { error: error instanceof Error ? error.message : String(error) };
            if (!json) out.line(`  failed: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
      } finally {
        await browser.close();
        await running.stop();
        if (options.keep) out.note(`demo work folder kept at ${workDir}`);
        else await rm(workDir, { recursive: true, force: true });
      }
      if (json) out.json({ steps: results, failed: failures });
      else out.line(`\nDemo finished: ${steps.length - failures.length} of ${steps.length} steps succeeded.`);
      if (failures.length > 0) throw new CheckFailedError(`demo steps failed: ${failures.join(', ')}`);
    });
}
