// CommonJS (no "type" in package.json), as `sam init`'s older nodejs templates wrote it.
exports.handler = async (event, context) => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ routeKey: event.routeKey, pathParameters: event.pathParameters ?? null, cookies: event.cookies ?? null, query: event.queryStringParameters ?? null, memory: context.memoryLimitInMB, remaining: context.getRemainingTimeInMillis() }),
});
