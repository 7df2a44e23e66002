import { RedisTaskStore } from '@tiffin/tasks-redis';
import { describeJobs } from '../../diffusion/test/service/jobs-suite.js';
import { describeOnRedis } from '../../tasks-redis/test/describe-on-redis.js';

// The diffusion service's jobs on Redis, as `tiffin serve --tasks redis://…` runs them (previews included).
// Here, not in the diffusion package, which does not depend on @tiffin/tasks-redis.
describeOnRedis('on a real redis-server', (redis) => {
  describeJobs('RedisTaskStore', () =>
    RedisTaskStore.open({ url: redis.url, queue: 'sd-jobs', maxTasks: 64, resultTtl: 600 }),
  );
});
