/**
 * Every `code` getting a located source raises: a download refused, a hash that differs, git, S3 or an archive tool
 * that failed or is missing (test/architecture/exit-codes.test.ts holds lib/sources/ to the list). Each raising site
 * checks its code against the union (`code: 'X' satisfies SourceErrorCode`).
 */
export const sourceErrorCodes = ['GIT_FAILED', 'HASH_MISMATCH', 'MISSING_TOOL', 'S3_FAILED', 'SOURCE_REFUSED'] as const;
export type SourceErrorCode = (typeof sourceErrorCodes)[number];
