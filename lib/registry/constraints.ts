import { expectArray, expectObject, expectString } from '../arguments.js';
import semver from 'semver';
import { GantryError, UsageError } from '../errors.js';
import type { RegistryErrorCode } from './errors.js';

/**
 * Version constraints with Terraform's module semantics: `=`, `!=`, `>`, `>=`, `<`, `<=`, `~>`, comma means "and".
 * Versions with fewer than three parts are padded with zeros (`1.2` is `1.2.0`), a `v` prefix is accepted, build
 * metadata is ignored when comparing.
 *
 * Pre-releases follow Terraform's and OpenTofu's module installer exactly. A release is checked by
 * hashicorp/go-version alone: a pre-release in a comparison (`<= 0.0.3-alpha.1`) is an ordinary bound, but `~>` with
 * a pre-release matches only pre-releases, so it matches no release. A pre-release must in addition be requested
 * exactly in apparentlymart/go-versions' sense, which the installer reaches through a parser that refuses commas: in
 * effect only a constraint that is one exact version (`1.2.0-beta`, `= 1.2.0-beta`, `=v1.2.0-beta`) selects a
 * pre-release, and `1.2.0-beta, >= 1.0` selects nothing at all.
 */

export type Operator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~>';

export interface VersionConstraint {
  operator: Operator;
  /** The version as a full semver string (padded). */
  version: string;
  /** How many numeric parts were written: decides the upper bound of `~>`. */
  segments: number;
}

export interface ConstraintSet {
  /** The text as given, trimmed (empty = any version). */
  text: string;
  parts: VersionConstraint[];
}

const versionPattern = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export interface ParsedVersion {
  /** Normalised semver, without build metadata. */
  semver: string;
  segments: number;
  prerelease: boolean;
}

/** Parses a version as go-version does (1 to 3 numeric parts, optional `v`, pre-release, build); undefined if not. */
export function parseVersion(text: string): ParsedVersion | undefined {
  if (typeof text !== 'string') expectString('parseVersion', 'text', text, 'a version string such as "1.2.3"');
  const match = versionPattern.exec(text.trim());
  if (!match) return undefined;
  const [, major, minor, patch, pre] = match;
  const segments = patch !== undefined ? 3 : minor !== undefined ? 2 : 1;
  const core = [major, minor ?? '0', patch ?? '0'].map((n) => String(Number(n))).join('.');
  const normalised = pre === undefined ? core : `${core}-${pre}`;
  if (semver.valid(normalised) === null) return undefined;
  return { semver: normalised, segments, prerelease: pre !== undefined };
}

/** Parses `">= 1.2, < 2.0"`-style constraints; an empty string allows any released version. */
export function parseConstraints(text: string | undefined): ConstraintSet {
  if (text !== undefined && text !== null && typeof text !== 'string')
    throw new UsageError(`a version constraint must be a string such as "~> 1.2", got ${typeof text}`, {
      code: 'INVALID_CONSTRAINT' satisfies RegistryErrorCode,
    });
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return { text: '', parts: [] };
  const parts = trimmed.split(',').map((piece) => {
    const match = /^\s*(!=|>=|<=|~>|=|>|<)?\s*(\S+)\s*$/.exec(piece);
    if (!match)
      throw new UsageError(`the version constraint "${trimmed}" has an empty or malformed part "${piece.trim()}"`, {
        code: 'INVALID_CONSTRAINT' satisfies RegistryErrorCode,
      });
    const operator = (match[1] ?? '=') as Operator;
    const parsed = parseVersion(match[2] as string);
    if (!parsed) {
      throw new UsageError(`the version constraint "${trimmed}" has an invalid version "${match[2]}"`, {
        code: 'INVALID_CONSTRAINT' satisfies RegistryErrorCode,
        hint: 'operators are =, !=, >, >=, <, <=, ~> followed by a version such as 1.2.3; separate parts with commas',
      });
    }
    return { operator, version: parsed.semver, segments: parsed.segments };
  });
  return { text: trimmed, parts };
}

function satisfiesOne(version: string, constraint: VersionConstraint): boolean {
  const c = constraint.version;
  switch (constraint.operator) {
    case '=':
      return semver.eq(version, c);
    case '!=':
      return !semver.eq(version, c);
    case '>':
      return semver.gt(version, c);
    case '>=':
      return semver.gte(version, c);
    case '<':
      return semver.lt(version, c);
    case '<=':
      return semver.lte(version, c);
    case '~>': {
      // go-version: a pessimistic constraint naming a pre-release matches pre-releases only (and never a release).
      if (semver.prerelease(c) !== null && semver.prerelease(version) === null) return false;
      // At least the constraint, and equal in every written part but the last.
      if (semver.lt(version, c)) return false;
      const v = semver.parse(version) as semver.SemVer;
      const k = semver.parse(c) as semver.SemVer;
      const vs = [v.major, v.minor, v.patch];
      const ks = [k.major, k.minor, k.patch];
      for (let i = 0; i < constraint.segments - 1; i += 1) if (vs[i] !== ks[i]) return false;
      return true;
    }
  }
}

/**
 * Whether `version` (already parsed) is allowed. A pre-release only when the whole constraint is one exact version
 * naming it (OpenTofu's prerelease-constraint-* cases: `0.0.3-alpha.1, >=0.0.2` selects nothing).
 */
export function allows(set: ConstraintSet, version: ParsedVersion): boolean {
  expectConstraintSet('allows', set);
  expectObject('allows', 'version', version, 'a version from parseVersion');
  if (typeof version.semver !== 'string' || semver.valid(version.semver) === null) expectObject('allows', 'version', null, 'a version from parseVersion');
  if (version.prerelease) {
    const only = set.parts.length === 1 ? set.parts[0] : undefined;
    return only !== undefined && only.operator === '=' && semver.eq(only.version, version.semver);
  }
  return set.parts.every((part) => satisfiesOne(version.semver, part));
}

function expectConstraintSet(where: string, set: unknown): asserts set is ConstraintSet {
  expectObject(where, 'set', set, 'a constraint set from parseConstraints');
  if (!Array.isArray((set as { parts?: unknown }).parts) || typeof (set as { text?: unknown }).text !== 'string')
    expectObject(where, 'set', null, 'a constraint set from parseConstraints');
}

export interface Selection {
  /** The version string exactly as the registry listed it (used for the download path). */
  version: string;
  /** Listed versions that did not parse and were skipped. */
  skipped: string[];
}

export class NoMatchingVersionError extends GantryError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'NO_MATCHING_VERSION' satisfies RegistryErrorCode, exitCode: 1, ...(hint === undefined ? {} : { hint }) });
  }
}

/**
 * Picks the newest listed version the constraints allow. Unparseable versions are skipped (reported in `skipped`).
 * When none matches, the error names the newest version available.
 */
export function selectVersion(listed: readonly string[], set: ConstraintSet, subject = 'the module'): Selection {
  expectArray('selectVersion', 'listed', listed, 'an array of version strings');
  expectConstraintSet('selectVersion', set);
  if (typeof subject !== 'string') subject = 'the module';
  const skipped: string[] = [];
  const parsed: Array<{ raw: string; version: ParsedVersion }> = [];
  for (const raw of listed) {
    const version = typeof raw === 'string' ? parseVersion(raw) : undefined;
    if (version) parsed.push({ raw, version });
    else skipped.push(String(raw));
  }
  parsed.sort((a, b) => semver.rcompare(a.version.semver, b.version.semver));
  const chosen = parsed.find((candidate) => allows(set, candidate.version));
  if (chosen) return { version: chosen.raw, skipped };
  const constraint = set.text === '' ? 'any version' : `"${set.text}"`;
  if (parsed.length === 0) {
    throw new NoMatchingVersionError(`${subject} has no usable versions${skipped.length ? ` (${skipped.length} unparseable skipped)` : ''}`);
  }
  const newestRelease = parsed.find((candidate) => !candidate.version.prerelease) ?? parsed[0];
  const namesPrerelease = set.parts.some((part) => semver.prerelease(part.version) !== null);
  const hint = namesPrerelease
    ? 'a pre-release is selected only by a constraint that is exactly that version (e.g. "= 1.2.0-beta.1"), as in Terraform; `~>` or another part next to it selects none'
    : 'widen the constraint or check the address';
  throw new NoMatchingVersionError(`no version of ${subject} matches ${constraint}; the newest available is ${newestRelease?.raw}`, hint);
}
