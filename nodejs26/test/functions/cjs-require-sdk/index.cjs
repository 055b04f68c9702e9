const sdk = require('sdk');
const { getRuntime } = require('sdk');
exports.main = (req) => ({ runtime: getRuntime(), same: sdk.getRequest() === req, signature: 'req' });
