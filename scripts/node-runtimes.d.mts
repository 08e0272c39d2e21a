// Types for node-runtimes.mjs (plain JavaScript: setup runs it before node_modules exists).
export interface NodeRuntime {
  version: string;
  major: number;
  features: string;
  dir: string;
  binary: string;
}
export const supported: boolean;
export function nodeRuntimeList(): NodeRuntime[];
export function nodeBinary(major: number): string;
export function installNodeRuntimes(): string[];
