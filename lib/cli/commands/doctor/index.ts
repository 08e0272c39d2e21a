/**
 * `gantry doctor`: Node, the system packages of scripts/system-packages.json (Chromium and chromedriver with their
 * majors matching, git, xz, bzip2, openssl) and the configured endpoints, in one table with the command that fixes
 * each failed check. Exit 0 when nothing a feature needs is missing, 1 otherwise.
 */
import type { Command } from 'commander';
import { CheckFailedError } from '../../../errors.js';
import type { DoctorCheck } from '../../../doctor/index.js';
import { usage, type CliContext } from '../../context.js';

interface DoctorFlags {
  timeout: string;
  registryHost?: string;
}

export function register(program: Command, context: CliContext): void {
  program
    .command('doctor')
    .description('check Node, Chromium and chromedriver, git, xz, bzip2 and the configured endpoints; say what fixes what is missing')
    .option('--timeout <ms>', 'longest wait for each version command and each endpoint', '5000')
    .option('--registry-host <host>', "check this registry's service discovery (default GANTRY_REGISTRY_HOST; unset: not checked)")
    .addHelpText(
      'after',
      `
Endpoints are checked only when configured: SECRETS_ADDR (the kv server's sys/health, without a token),
GANTRY_REGISTRY_HOST or --registry-host (service discovery), PAGEANALYSIS_BASE_URL (without the key or token).
Exit codes: 0 everything needed is present, 1 something a feature needs is missing or a configured endpoint is
unreachable, 2 usage error.`,
    )
    .action(async (flags: DoctorFlags, command: Command) => {
      const { json } = context.globals(command);
      const { out } = context;
      if (!/^\d+$/.test(flags.timeout.trim()) || Number(flags.timeout) === 0)
        throw usage(`--timeout: "${flags.timeout}" is not a positive whole number of milliseconds`, 'write it as --timeout 5000');
      const { isFailure, runDoctor } = await import('../../../doctor/index.js');
      // A probe of an unreachable endpoint takes its whole timeout, some one after another: said rather than silent.
      const slow = setTimeout(
        () => out.note(`still checking: a probe has not answered yet; each gives up after ${Number(flags.timeout) / 1000} s (--timeout)`),
        4_000,
      );
      const report = await runDoctor({
        timeoutMs: Number(flags.timeout),
        logger: context.logger,
        ...(flags.registryHost ? { registryHost: flags.registryHost } : {}),
      }).finally(() => clearTimeout(slow));
      const failed = report.checks.filter(isFailure);
      if (json) out.json(report);
      else {
        out.table(report.checks, [
          { header: 'check', value: (check: DoctorCheck) => (check.setting ? `${check.check} (${check.setting})` : check.check) },
          { header: 'status', value: (check) => check.status },
          { header: 'detail', value: (check) => check.detail },
          { header: 'fix', value: (check) => check.fix },
        ]);
        out.line();
        for (const check of failed) out.line(`${check.check} (${check.status}): needed for ${check.neededFor ?? 'Gantry'}`);
        if (report.setup) out.line(`to set up what is missing: ${report.setup}`);
        if (failed.length === 0) out.line('everything Gantry needs is here');
      }
      if (failed.length > 0) {
        throw new CheckFailedError(
          `missing or failing: ${failed.map((check) => check.check).join(', ')}`,
          report.setup ? { hint: `run \`${report.setup}\`, then \`gantry doctor\` again` } : {},
        );
      }
    });
}
