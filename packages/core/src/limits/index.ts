export { checkJsonDepth, nestsDeeperThan } from './depth.js';
export { DEFAULT_LIMITS, type LimitOptions, type Limits, resolveLimits } from './limits.js';
