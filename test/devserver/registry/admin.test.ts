// The registry's /_gantry/ admin API dispatched by the kit's RouteTable: exact paths, HEAD not served by GET, 405 with
// the path's methods in Allow, and refresh by any method but POST no endpoint at all.
import assert from 'node:assert/strict';
import { startRegistryServer, type RegistryServer } from '../../../devserver/registry/index.js';
import { tempDir, writeVersion } from './helpers.js';

describe('devserver/registry: the admin API on the route table', function () {
  let temp: { dir: string; remove(): Promise<void> };
  let server: RegistryServer;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/_gantry/${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });

  before(async () => {
    temp = await tempDir('admin');
    await writeVersion(temp.dir, 'acme/app/aws', '1.0.0', { 'main.tf': 'output "x" { value = 1 }\n' });
    server = await startRegistryServer({ dir: temp.dir });
  });
  after(async () => {
    await server?.stop();
    await temp?.remove();
  });

  it('LAYER-ROUTES: faults by GET, POST (adds), PUT (replaces), DELETE; requests by GET and DELETE; refresh by POST', async () => {
    const fault = { path: '/v1/modules/*/*/*/versions', kind: 'status', status: 503 };
    assert.deepEqual(((await (await admin('POST', 'faults', fault)).json()) as { faults: unknown[] }).faults.length, 1);
    assert.deepEqual(((await (await admin('POST', 'faults', [fault])).json()) as { faults: unknown[] }).faults.length, 2);
    assert.deepEqual(((await (await admin('PUT', 'faults', fault)).json()) as { faults: unknown[] }).faults.length, 1);
    assert.deepEqual(((await (await admin('GET', 'faults')).json()) as { faults: unknown[] }).faults.length, 1);
    assert.deepEqual(await (await admin('DELETE', 'faults')).json(), { faults: [] });
    assert.equal((await admin('GET', 'requests')).status, 200);
    assert.deepEqual(await (await admin('DELETE', 'requests')).json(), { requests: [] });
    assert.deepEqual(await (await admin('POST', 'refresh')).json(), { modules: 1 });
    const bad = await admin('POST', 'faults', { path: '/v1/**', kind: 'status', status: 'soon' });
    assert.equal(bad.status, 400);
  });

  it('LAYER-ROUTES: another method is 405 with the methods of the path in Allow (HEAD included); refresh and unknown paths are 404', async () => {
    for (const [method, path, allow] of [
      ['PATCH', 'faults', 'GET, POST, PUT, DELETE'],
      ['HEAD', 'faults', 'GET, POST, PUT, DELETE'],
      ['POST', 'requests', 'GET, DELETE'],
      ['HEAD', 'requests', 'GET, DELETE'],
    ]) {
      const r = await admin(method!, path!);
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.equal(r.headers.get('allow'), allow);
    }
    for (const [method, path] of [
      ['GET', 'refresh'],
      ['DELETE', 'refresh'],
      ['GET', 'faults/'],
      ['GET', 'nothing'],
    ]) {
      const r = await admin(method!, path!);
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(await r.json(), { errors: [`no admin endpoint at /_gantry/${path}`] });
    }
  });
});
