/** What `gantry doctor` reports (lib/doctor/index.ts runs the checks, endpoints.ts probes the services). */
/**
 * `not configured` is no failure, nor is `missing (tests only)` (a package only the test suite needs); `missing`,
 * `mismatch`, `unreachable` and `error` are.
 */
export type CheckStatus = 'ok' | 'missing' | 'missing (tests only)' | 'mismatch' | 'unreachable' | 'error' | 'not configured';

export interface DoctorCheck {
  /** node, a package name (chromium, git …) or an endpoint (secrets service …). */
  check: string;
  kind: 'node' | 'package' | 'endpoint';
  status: CheckStatus;
  /** The version and path, the address, or what is wrong. */
  detail: string;
  path?: string;
  version?: string;
  /** The variable that configures an endpoint. */
  setting?: string;
  /** What needs it, in words. */
  neededFor?: string;
  /** The command or setting that fixes a failed check. */
  fix?: string;
}

export interface DoctorReport {
  /** True when no check failed. */
  ok: boolean;
  checks: DoctorCheck[];
  /** One command that sets up every missing package (`npm run setup` in a clone), when one is missing. */
  setup?: string;
}
