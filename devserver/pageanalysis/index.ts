export { startPageanalysisServer, recordedAnalyser, RUN_PAGEANALYSIS_PATH } from './server.js';
export type { PageanalysisServer, PageanalysisServerOptions, Analyser, AnalysisAsk, Fault, RecordedRequest } from './server.js';
export { runLighthouseCli } from './lighthouse.js';
export { startDevPageanalysis, DEV_PAGEANALYSIS_PORT } from './starter.js';
