import request from 'supertest';
import { RedlockMasters } from './redlock-test-support';
import { testPrefix } from '../support/test-prefix';
import { storeObservabilitySuite } from './store-observability.fixture';

describe('Redlock store: health indicator and metrics', () => {
  let masters: RedlockMasters;
  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
  });
  const app = storeObservabilitySuite('redlock', testPrefix(__filename), () => ({ store: 'redlock', redlock: { masters: masters.urls } }));
  afterAll(async () => {
    await masters?.stop();
  });

  it('stays up with one master of three down (a majority answers), and reports down (HTTP 503) once two are, without a server in the body', async () => {
    await masters.kill(0);
    const oneDown = await request(app().getHttpServer()).get('/health').expect(200);
    expect(oneDown.body.info.lock).toMatchObject({ status: 'up', storeReachable: true });
    await masters.kill(1);
    const response = await request(app().getHttpServer()).get('/health').expect(503);
    expect(response.body.error.lock).toMatchObject({ status: 'down', storeReachable: false, message: 'lock store unreachable' });
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
  });
});
