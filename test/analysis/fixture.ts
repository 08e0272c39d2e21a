/* eslint-disable @typescript-eslint/no-explicit-any -- tests edit recorded JSON documents freely */
// The recorded v5 response (fixtures/light-page.v5.json): a real local run of the light page from site.ts, made by
// fixtures/record.ts (Lighthouse 12.8.2, Debian Chromium, desktop preset, all four categories; screenshots dropped).
import { readFileSync } from 'node:fs';

const text = readFileSync(new URL('./fixtures/light-page.v5.json', import.meta.url), 'utf8');

/** A fresh deep copy of the recorded response, with the placeholder host replaced by `origin` when given. */
export function recordedResponse(origin = 'http://127.0.0.1:PORT'): Record<string, any> {
  return JSON.parse(text.replaceAll('http://127.0.0.1:PORT', origin)) as Record<string, any>;
}

/** The recorded run back in Lighthouse's own shape (what the dev server's recorded mode serves). */
export function recordedLighthouseResult(): Record<string, any> {
  const { beaconResult } = recordedResponse();
  const { beaconVersion, ...rest } = beaconResult;
  return { ...rest, lighthouseVersion: beaconVersion };
}

/** A response with chosen category scores and metric values, built on the recorded run. */
export function responseWith(options: {
  scores?: Record<string, number | null>;
  metrics?: Record<string, number>;
  runtimeError?: { code: string; message: string };
}): Record<string, any> {
  const response = recordedResponse();
  for (const [id, score] of Object.entries(options.scores ?? {})) response.beaconResult.categories[id].score = score;
  for (const [id, value] of Object.entries(options.metrics ?? {})) response.beaconResult.audits[id].numericValue = value;
  if (options.runtimeError) response.beaconResult.runtimeError = options.runtimeError;
  return response;
}
