import {
  Body,
  type CanActivate,
  Controller,
  ForbiddenException,
  Get,
  HttpCode,
  HttpException,
  Injectable,
  NotFoundException,
  Param,
  Post,
  UseGuards,
} from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, LockService } from '../../lib/index';
import { testPrefix } from '../support/test-prefix';
import { redisLock, startLockedApp, type LockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);

@Injectable()
class DenyGuard implements CanActivate {
  canActivate(): boolean {
    throw new ForbiddenException('guard ran');
  }
}

class TeapotError extends HttpException {
  constructor() {
    super('short and stout', 418);
  }
}

@Controller('orders')
class OrdersController {
  readonly ran: string[] = [];

  constructor(private readonly locks: LockService) {}

  @Post(':id/pay')
  @DistributedLock('order:{id}', { waitMs: 0 })
  async pay(@Param('id') id: string, @Body() body: { amount: number }): Promise<object> {
    this.ran.push(`pay:${id}`);
    return { id, amount: body.amount, key: this.locks.current()?.key };
  }

  @DistributedLock('order:{id}', { waitMs: 0 })
  @Post(':id/refund')
  @HttpCode(202)
  async refund(@Param('id') id: string): Promise<object> {
    this.ran.push(`refund:${id}`);
    return { id, key: this.locks.current()?.key };
  }

  @Get(':id/missing')
  @DistributedLock('order:{id}')
  async missing(@Param('id') id: string): Promise<never> {
    throw new NotFoundException(`order ${id} not found`);
  }

  @DistributedLock('order:{id}')
  @Get(':id/teapot')
  async teapot(@Param('id') id: string): Promise<never> {
    throw new TeapotError();
  }

  @Get(':id/crash')
  @DistributedLock('order:{id}')
  async crash(@Param('id') id: string): Promise<never> {
    throw new Error('internal detail');
  }

  @UseGuards(DenyGuard)
  @DistributedLock('order:{id}')
  @Get(':id/guarded')
  async guarded(@Param('id') id: string): Promise<void> {
    this.ran.push(`guarded:${id}`);
  }
}

describe('@DistributedLock on a controller route over HTTP', () => {
  let app: LockedApp;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await startLockedApp({ lock: redisLock(PREFIX), controllers: [OrdersController], providers: [DenyGuard] });
    http = request(app.app.getHttpServer());
  });

  afterAll(() => app?.close());

  it('registers the route with the decorator below @Post and runs it under the lock', async () => {
    const response = await http.post('/orders/1/pay').send({ amount: 5 }).expect(201);
    expect(response.body).toEqual({ id: '1', amount: 5, key: 'order:1' });
  });

  it('registers the route with the decorator above @Post, keeping @HttpCode', async () => {
    const response = await http.post('/orders/2/refund').expect(202);
    expect(response.body).toEqual({ id: '2', key: 'order:2' });
  });

  it('answers 409 Conflict with a JSON body when the key is held, without running the handler', async () => {
    const held = await app.get(LockService).acquire('order:3');
    try {
      const pay = await http.post('/orders/3/pay').send({ amount: 1 }).expect(409);
      expect(pay.body).toEqual({ statusCode: 409, error: 'Conflict', code: 'LOCK_NOT_ACQUIRED', message: expect.stringMatching(/locked/) });
      await http.post('/orders/3/refund').expect(409);
      expect(app.get(OrdersController).ran).not.toContain('pay:3');
      expect(app.get(OrdersController).ran).not.toContain('refund:3');
    } finally {
      await held.release();
    }
    await http.post('/orders/3/pay').send({ amount: 1 }).expect(201);
  });

  it('passes business HTTP exceptions through with their own status and body', async () => {
    const missing = await http.get('/orders/4/missing').expect(404);
    expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'order 4 not found' });
    const teapot = await http.get('/orders/4/teapot').expect(418);
    expect(teapot.body).toEqual({ statusCode: 418, message: 'short and stout' });
  });

  it('leaves other errors to Nest: a plain Error is still a 500 without details', async () => {
    const crash = await http.get('/orders/5/crash').expect(500);
    expect(crash.body).toEqual({ statusCode: 500, message: 'Internal server error' });
  });

  it('keeps guards: the guard runs (403) and the handler does not', async () => {
    await http.get('/orders/6/guarded').expect(403);
    expect(app.get(OrdersController).ran).not.toContain('guarded:6');
  });

  it('released every key after business errors', async () => {
    for (const id of ['4', '5']) {
      const lease = await app.get(LockService).tryAcquire(`order:${id}`);
      expect(lease).not.toBeNull();
      await lease!.release();
    }
  });
});
