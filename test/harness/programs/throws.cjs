// A CommonJS program that fails after declaring one record, as a program with a bug does.
const testRecords = require('gantry-test-records');

new testRecords.Record('declared', { key: 'declared', value: 'v' });
throw new Error('the program refuses to continue: invented failure for the test');
