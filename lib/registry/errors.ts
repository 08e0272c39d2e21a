/**
 * Every `code` the registry area raises besides discovery's (`discoveryErrorCodes` in discovery.ts, with their exit
 * codes): the manifest, the lock file, addresses, constraints, locations, credentials and the installed modules
 * (test/architecture/exit-codes.test.ts holds lib/registry/ to the list). Each raising site checks its code against
 * the union (`code: 'X' satisfies RegistryErrorCode`).
 */
export const registryErrorCodes = [
  'CONSTRAINT_CHANGED',
  'INSTALLED_RECORD_INVALID',
  'INVALID_ADDRESS',
  'INVALID_CONSTRAINT',
  'INVALID_LOCATION',
  'INVALID_TOKEN',
  'LOCAL_CHANGES',
  'LOCK_FILE_INVALID',
  'LOCK_MISMATCH',
  'MANIFEST_INVALID',
  'MANIFEST_MISSING',
  'NOT_INSTALLED_BY_GANTRY',
  'NOT_PINNED',
  'NO_MATCHING_VERSION',
  'NO_V2_API',
  'TERRAFORM_CLI_CONFIG_INVALID',
] as const;
export type RegistryErrorCode = (typeof registryErrorCodes)[number];
