/**
 * The codes the command raises itself, which no area owns; what a command raises for an area (`STORAGE_NOT_A_FILE`,
 * `SECRETS_MISSING` …) is in that area's catalogue (test/architecture/exit-codes.test.ts holds lib/cli/ to them all).
 * Each raising site checks its code against the union (`code: 'X' satisfies CliErrorCode`).
 */
export const cliErrorCodes = ['DEV_PORT_IN_USE', 'GATE_ENGINE_ERROR', 'INTERRUPTED', 'MCP_TOOL_ERROR', 'VERIFY_FAILED'] as const;
export type CliErrorCode = (typeof cliErrorCodes)[number];
