// Health, readiness and metrics of Gantry's long-running servers (`gantry hooks serve`, `hooks worker`, `mcp serve`).
export { Health, type CheckReport, type CheckState, type ReadinessCheck, type ReadinessReport } from './health.js';
export { ServerMetrics, labelValue, type BudgetReading, type DeliveryObservation, type QueueCounts, type QueueSource, type ServerKind } from './metrics.js';
export { defaultOpsPaths, opsHandler, startOpsServer, type OpsHandler, type OpsPaths, type ServerOps } from './endpoints.js';
