import request from 'supertest';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { testPrefix } from '../support/test-prefix';
import { storeObservabilitySuite } from './store-observability.fixture';

describe('ZooKeeper store: health indicator and metrics', () => {
  let ensemble: ZookeeperEnsemble;
  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble();
  });
  const app = storeObservabilitySuite('zookeeper', testPrefix(__filename), () => ({ store: 'zookeeper', zookeeper: ensemble.connect }));
  afterAll(async () => {
    await ensemble?.stop();
  });

  it('reports down (HTTP 503) once ZooKeeper is stopped, without the server in the body', async () => {
    await ensemble.stop();
    const response = await request(app().getHttpServer()).get('/health').expect(503);
    expect(response.body.error.lock).toMatchObject({ status: 'down', storeReachable: false, message: 'lock store unreachable' });
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
  });
});
