/** What both engines, the remote v5 API and local Lighthouse, offer a gate: one analysis in the v5 result shape. */
import type { CategoryId } from './enums.js';
import type { PageanalysisApiResponse } from './model.js';

export type EngineName = 'local' | 'api';
export type FormFactor = 'MOBILE' | 'DESKTOP';

export interface AnalysisRequest {
  url: string;
  categories: readonly CategoryId[];
  strategy: FormFactor;
  locale?: string;
  signal?: AbortSignal;
}

export interface AnalysisRun {
  response: PageanalysisApiResponse;
  /** Lighthouse's own HTML report; only the local engine has one. */
  html?: () => string;
}

export interface AnalysisEngine {
  readonly name: EngineName;
  analyze(request: AnalysisRequest): Promise<AnalysisRun>;
}
