export { WebhookReceiver, webhookSecrets } from './receiver.js';
export type { ReceiverOptions, WebhookContext, WebhookHandler, DeliveryRecord } from './receiver.js';
export { MemoryQueue } from './queue.js';
export type { JobQueue, WebhookJob, JobOutcome, JobState, AddResult, JobRunner, MemoryQueueOptions } from './queue.js';
export { RedisQueue, WebhookQueueError, webhookQueueFor } from './redis-queue.js';
export type { RedisQueueOptions } from './redis-queue.js';
export { sign, verify } from './verify.js';
export type { VerifyResult, VerifyOptions, SignatureAlgorithm } from './verify.js';
export { readDelivery, sendRefusal, deliveryBodyPayload } from './delivery.js';
export type { Delivery, ReadDeliveryOptions } from './delivery.js';
export { WebhookDeliveryError, webhookErrorCodes } from './errors.js';
export type { WebhookErrorCode } from './errors.js';
export { checkPayload } from './payload.js';
export type { PayloadCheck } from './payload.js';
export { webhookEvents, eventNamed } from './catalogue.js';
export type { WebhookEvent } from './catalogue.js';
export type { HooksConfig, EnvironmentGate } from './config.js';
export type { ProtectionOptions, ProtectionDecision } from './protection.js';

/**
 * Deployment protection by gates — the hooks file (`loadHooksConfig`, `parseHooksConfig`, `gateFor`) and the handlers
 * (`deploymentProtection`, `deploymentStatusGate`) — loaded when asked: they load lib/analysis, and the S3 client with
 * it (~25 MB of RSS a receiver without gates never uses). The public API (lib/webhooks/public.ts) exports them as well.
 */
export async function loadDeploymentGates() {
  const [config, protection] = await Promise.all([import('./config.js'), import('./protection.js')]);
  return { ...config, ...protection };
}
