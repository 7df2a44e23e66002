import { describeJobs } from './jobs-suite.js';

describeJobs('memory');
