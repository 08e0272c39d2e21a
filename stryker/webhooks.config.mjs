import { areaConfig } from './base.mjs';

export default areaConfig('webhooks', {
  mutate: ['lib/webhooks/verify.ts', 'lib/webhooks/delivery.ts'],
  // The signature checks and the delivery reader called in-process (delivery.test.ts serves real sockets from the
  // test process itself, delivery-body.test.ts reads bodies without one). The receiver's files (receiver,
  // large-deliveries) reach the same code but take minutes each; the CLI's run it in other processes. delivery-fed.test.ts
  // pushes bodies into a request by hand: what arrives when, and the large-body buffer's reuse.
  spec: [
    'test/webhooks/verify.test.ts',
    'test/webhooks/delivery.test.ts',
    'test/webhooks/delivery-body.test.ts',
    'test/webhooks/delivery-fed.test.ts',
    'test/properties/webhook-delivery.test.ts',
  ],
});
