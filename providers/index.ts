// Pulumi dynamic resources, one file each; each engineer adds its export here.
export {};
export { KvSecret, kvSecretOperations } from './kvSecret.js';
export type { KvSecretArgs, KvSecretInputs, KvSecretOutputs } from './kvSecret.js';
export { BrowserCheck, browserCheckOperations } from './browserCheck.js';
export type { BrowserCheckArgs, BrowserCheckInputs, BrowserCheckOutputs } from './browserCheck.js';
export { RegistryModule, registryModuleOperations } from './registryModule.js';
export type { RegistryModuleArgs, RegistryModuleInputs, RegistryModuleOutputs } from './registryModule.js';
export { PageAnalysisGate, pageAnalysisGateOperations } from './pageAnalysisGate.js';
export type { PageAnalysisGateArgs, PageAnalysisGateInputs, PageAnalysisGateOutputs, GateCheck } from './pageAnalysisGate.js';
export { CommitStatus, commitStatusOperations } from './commitStatus.js';
export type { CommitStatusArgs, CommitStatusInputs, CommitStatusOutputs } from './commitStatus.js';
export { StorageFolder, storageFolderOperations } from './storageFolder.js';
export type { StorageFolderArgs, StorageFolderInputs, StorageFolderOutputs } from './storageFolder.js';
export { StorageFile, storageFileOperations } from './storageFile.js';
export type { StorageFileArgs, StorageFileInputs, StorageFileOutputs } from './storageFile.js';
export { StoragePermission, storagePermissionOperations } from './storagePermission.js';
export type { StoragePermissionArgs, StoragePermissionInputs, StoragePermissionOutputs, StoragePermissionRole, StoragePermissionType } from './storagePermission.js';
