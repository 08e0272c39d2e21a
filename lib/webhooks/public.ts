// The `webhooks` namespace of the public API (`import { webhooks } from 'gantry'`; docs/api.md lists it). lib/index.ts
// exports the main names flat as well. The area's entry point (index.ts) is its internal face, for the command.
export { WebhookReceiver, MemoryQueue, RedisQueue, WebhookDeliveryError, WebhookQueueError } from './index.js';
export { verify, sign, readDelivery, sendRefusal, checkPayload, webhookEvents, eventNamed } from './index.js';
export { loadHooksConfig, parseHooksConfig } from './config.js';
export { deploymentProtection, deploymentStatusGate } from './protection.js';
export type {
  ReceiverOptions,
  WebhookContext,
  WebhookHandler,
  DeliveryRecord,
  JobQueue,
  WebhookJob,
  JobOutcome,
  JobState,
  MemoryQueueOptions,
  RedisQueueOptions,
} from './index.js';
export type { VerifyResult, VerifyOptions, SignatureAlgorithm, Delivery, ReadDeliveryOptions, PayloadCheck } from './index.js';
export type {
  WebhookEvent,
  WebhookProperty,
  DeploymentProtectionRulePayload,
  DeploymentStatusPayload,
  PushPayload,
  StatusPayload,
  PingPayload,
} from './catalogue.js';
export type { HooksConfig, EnvironmentGate, ProtectionOptions, ProtectionDecision } from './index.js';
