import { areaConfig } from './base.mjs';

export default areaConfig('http-bodies', {
  // The HTTP core's decisions about bodies: the byte caps (buffered and streamed), which statuses are accepted, how
  // query parameters and error bodies are read, and the streamed body's typed errors and back-pressure.
  mutate: ['lib/http/bodies.ts'],
  spec: ['test/http/client.test.ts'],
});
