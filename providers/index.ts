// Pulumi dynamic resources, one file each; each engineer adds its export here.
export {};
export { KvSecret, kvSecretOperations } from './kv-secret.js';
export type { KvSecretArgs, KvSecretInputs, KvSecretOutputs } from './kv-secret.js';
export { BrowserCheck, browserCheckOperations } from './browser-check.js';
export type { BrowserCheckArgs, BrowserCheckInputs, BrowserCheckOutputs } from './browser-check.js';
export { RegistryModule, registryModuleOperations } from './registry-module.js';
export type { RegistryModuleArgs, RegistryModuleInputs, RegistryModuleOutputs } from './registry-module.js';
export { PageAnalysisGate, pageAnalysisGateOperations } from './page-analysis-gate.js';
export type { PageAnalysisGateArgs, PageAnalysisGateInputs, PageAnalysisGateOutputs, GateCheck } from './page-analysis-gate.js';
export { CommitStatus, commitStatusOperations } from './commit-status.js';
export type { CommitStatusArgs, CommitStatusInputs, CommitStatusOutputs } from './commit-status.js';
export { StorageFolder, storageFolderOperations } from './storage-folder.js';
export type { StorageFolderArgs, StorageFolderInputs, StorageFolderOutputs } from './storage-folder.js';
export { StorageFile, storageFileOperations } from './storage-file.js';
export type { StorageFileArgs, StorageFileInputs, StorageFileOutputs } from './storage-file.js';
export { StoragePermission, storagePermissionOperations } from './storage-permission.js';
export type {
  StoragePermissionArgs,
  StoragePermissionInputs,
  StoragePermissionOutputs,
  StoragePermissionRole,
  StoragePermissionType,
} from './storage-permission.js';
