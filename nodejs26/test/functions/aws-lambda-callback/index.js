// The callback style of the Lambda docs (nodejs20.x and nodejs22.x, CommonJS index.js):
// handler(event, context, callback), answering from a timer as code waiting on I/O does.
exports.handler = function (event, context, callback) {
  const path = event.rawPath;
  if (path === '/error') return callback(new Error('callback failed with hunter2'));
  if (path === '/succeed') return context.succeed({ statusCode: 200, body: 'succeeded' });
  setTimeout(() => {
    callback(null, { statusCode: 200, headers: { 'content-type': 'text/plain' }, body: `later for ${event.queryStringParameters?.name ?? 'nobody'}` });
  }, 20);
};

// Neither async nor taking the callback: what it returns is not the result up to nodejs22.x.
exports.returnsPlainly = function (event, context) {
  return { statusCode: 200, body: 'returned' };
};
