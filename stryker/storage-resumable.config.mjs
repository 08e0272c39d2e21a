import { areaConfig } from './base.mjs';

export default areaConfig('storage-resumable', {
  mutate: ['lib/storage/upload/resumable.ts'],
  // In process: resumable-offsets.test.ts runs the protocol against a programmed Drive v2 upload service on 127.0.0.1
  // (every 308, Range, status query and expiry answered or faulted at will); transfers.test.ts runs it against the
  // embedded storage server (session files, a file's md5 on its worker, a proxy that flips a byte) and covers `tap`
  // through the media and multipart uploads. transfers-large.test.ts (300 MB, a killed child process) is too slow for
  // every mutant.
  spec: ['test/storage/resumable-offsets.test.ts', 'test/storage/transfers.test.ts'],
});
