import { RedisTaskStore } from '@tiffin/tasks-redis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { describeJobs } from '../../diffusion/test/service/jobs-suite.js';
import { hasRedisServer, RedisServer } from '../../tasks-redis/test/redis-server.js';

// The diffusion service's jobs on Redis, as `tiffin serve --tasks redis://…` runs them (previews included).
// Here, not in the diffusion package, which does not depend on @tiffin/tasks-redis.
const available = hasRedisServer();
describe.runIf(available)('on a real redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  describeJobs('RedisTaskStore', () =>
    RedisTaskStore.open({ url: redis.url, queue: 'sd-jobs', maxTasks: 64, resultTtl: 600 }),
  );
});
it.runIf(!available)('needs redis-server', () => {
  throw new Error('redis-server is not installed: apt-get install -y redis-server');
});
