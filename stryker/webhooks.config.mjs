import { areaConfig } from './base.mjs';

export default areaConfig('webhooks', {
  mutate: ['lib/webhooks/verify.ts', 'lib/webhooks/delivery.ts'],
  // The signature checks and the delivery reader called in-process (delivery.test.ts serves real sockets from the
  // test process itself); the receiver's and the CLI's end-to-end files run the same code in other processes.
  spec: ['test/webhooks/verify.test.ts', 'test/webhooks/delivery.test.ts', 'test/properties/webhook-delivery.test.ts'],
});
